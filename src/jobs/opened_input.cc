// Opening a job's input and choosing its reader (opened_input.h).
#include "jobs/opened_input.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "jobs/sigbus_exit.h"
#include "pihydrate/errors.h"
#include "readers/readers.h"

namespace pihydrate {

const char* const kInputShrank = "the input shrank while it was being read; nothing written (run again)";

Diagnostic input_changed(const std::string& file, std::string message) {
  Diagnostic d;
  d.code = Code::kInputChanged;
  d.severity = Severity::kError;
  d.level = Level::kLoad;
  d.file = file;
  d.message = std::move(message);
  return d;
}

OpenedInput::OpenedInput(const Input& input) : name_(input.name()) {
  // A session an agent keeps as a folder or names by id (a Copilot CLI session): its file.
  if (input.kind() == Input::Kind::kFile)
    name_ = copilot_cli_session_file(input.name(), std::getenv("COPILOT_HOME"), std::getenv("HOME"));
  switch (input.kind()) {
    case Input::Kind::kStream:
      fd_.fd = spool_stream(*input.in(), input.name() == "<stdin>" ? "standard input" : input.name());
      break;
    case Input::Kind::kFile:
      path_ = name_;
      fd_.fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd_.fd < 0) throw IoError("cannot open " + path_ + ": " + std::strerror(errno));
      if (::fstat(fd_.fd, &before_) == 0) {
        if (S_ISDIR(before_.st_mode)) throw IoError(path_ + " is a directory");
        check_unchanged_ = true;
      }
      break;
    case Input::Kind::kBytes: bytes_ = &input.data(); break;
    case Input::Kind::kSpooled:
      // Its own descriptor on the spool: read_all moves the offset.
      fd_.fd = ::fcntl(input.fd(), F_DUPFD_CLOEXEC, 0);
      if (fd_.fd < 0) throw IoError("cannot read " + name_ + ": " + std::strerror(errno));
      break;
  }
}

std::string OpenedInput::read_all() const {
  if (fd_.fd < 0) return *bytes_;
  // From the start, wherever an earlier read left the offset.
  if (::lseek(fd_.fd, 0, SEEK_SET) < 0 && errno != ESPIPE)
    throw IoError("cannot read " + name_ + ": " + std::strerror(errno));
  return pihydrate::read_all(fd_.fd, name_);
}

namespace {

struct SigbusGuard final : ReaderInput::MappedReadGuard {
  template <typename... Args>
  explicit SigbusGuard(Args&&... args) : exit(std::forward<Args>(args)...) {}
  SigbusExit exit;
};

}  // namespace

std::unique_ptr<ReaderInput::MappedReadGuard> OpenedInput::guard_mapped_read() const {
  if (!exit_on_shrunk_input) return nullptr;
  static const std::vector<boost::filesystem::path> none;
  return std::make_unique<SigbusGuard>(exit_on_shrunk_input(input_changed(name_, kInputShrank)),
                                       made_directories != nullptr ? *made_directories : none);
}

Input OpenedInput::as_input() const {
  if (!path_.empty()) return Input::file(path_);
  return Input::bytes(read_all(), name_);
}

bool OpenedInput::changed() const {
  struct stat after {};
  return check_unchanged_ && ::fstat(fd_.fd, &after) == 0 &&
         (after.st_size != before_.st_size || after.st_mtim.tv_sec != before_.st_mtim.tv_sec ||
          after.st_mtim.tv_nsec != before_.st_mtim.tv_nsec || after.st_ctim.tv_sec != before_.st_ctim.tv_sec ||
          after.st_ctim.tv_nsec != before_.st_ctim.tv_nsec);
}

namespace {

// The input's first bytes for the readers' bids: 64 KiB, read on in 64 KiB
// steps until the first line that is not blank ends (at most 4 MiB): a pi
// header is a few hundred bytes, and the file may be gigabytes.
std::string head_bytes(const OpenedInput& input, bool& whole) {
  constexpr std::size_t kStep = std::size_t{64} << 10, kMax = std::size_t{4} << 20;
  whole = false;
  if (input.fd() < 0) {
    whole = input.bytes().size() <= kMax;
    return std::string(input.bytes().substr(0, kMax));
  }
  std::string head;
  while (head.size() < kMax) {
    const std::size_t got = head.size();
    head.resize(got + kStep);
    const ssize_t n = ::pread(input.fd(), &head[got], kStep, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) {
      head.resize(got);
      continue;
    }
    head.resize(got + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
    if (n <= 0) {
      whole = n == 0;
      break;
    }
    const std::size_t text = head.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
    if (text != std::string::npos && head.find('\n', text) != std::string::npos) break;
  }
  return head;
}

}  // namespace

ChosenReader choose_reader(const ReaderRegistry& registry, const std::string& from, const OpenedInput& input) {
  ChosenReader chosen;
  if (!from.empty()) {
    chosen.reader = registry.find(from);
    if (chosen.reader == nullptr)
      throw std::invalid_argument("no reader is called '" + from + "' (there are " + registry.names() + ")");
    return chosen;
  }
  bool whole = false;
  const std::string head = head_bytes(input, whole);
  chosen.reader = registry.choose(make_input_head(head, whole));
  if (chosen.reader == nullptr) {
    chosen.reader = &registry.fallback();
    chosen.recognised = false;
  }
  return chosen;
}

std::string reading_phase(const ReaderInfo& info) {
  return std::string(info.converts ? "converting the " : "reading the ") + info.title;
}

}  // namespace pihydrate
