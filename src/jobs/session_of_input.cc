// read_session_of (pihydrate.h): an input of any format as the pi session it
// stands for, for the commands that look at pi sessions (tree, context,
// validate).
#include "jobs/session_of_input.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "jobs/opened_input.h"
#include "pihydrate/errors.h"
#include "pihydrate/reader.h"

namespace pihydrate {
namespace {

// The hydrated session's lines, written to an unlinked temporary file (the
// session is as big as the input, or bigger).
class SpoolSink final : public LineSink {
 public:
  explicit SpoolSink(const std::string& name) : name_(name) { file_.fd = make_unlinked_temp("the converted session"); }
  void write_line(std::string_view line) override {
    buffer_.append(line).push_back('\n');
    if (buffer_.size() >= kBlockBytes) flush();
  }
  void write_lines(std::string_view lines) override {
    flush();
    write_all(lines);
  }
  // The file, rewound, for Input::spooled.
  int take() {
    flush();
    if (::lseek(file_.fd, 0, SEEK_SET) < 0)
      throw IoError("cannot rewind the converted " + name_ + ": " + std::strerror(errno));
    return std::exchange(file_.fd, -1);
  }

 private:
  static constexpr std::size_t kBlockBytes = std::size_t{1} << 20;
  void flush() {
    write_all(buffer_);
    buffer_.clear();
  }
  void write_all(std::string_view bytes) {
    while (!bytes.empty()) {
      const ssize_t n = ::write(file_.fd, bytes.data(), bytes.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw IoError("cannot write the converted " + name_ + ": " + std::strerror(errno));
      bytes.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  const std::string& name_;
  Fd file_;
  std::string buffer_;
};

// validate judges a conversion by what converting found: the session itself is not kept.
class DroppingSink final : public LineSink {
 public:
  void write_line(std::string_view) override {}
  void write_lines(std::string_view) override {}
};

}  // namespace

SessionOfInput read_session_of(const Input& input, const std::string& from, PiVersion version,
                               const ReaderRegistry* readers) {
  return read_session_of(input, from, version, readers, KeepSession::kYes);
}

SessionOfInput read_session_of(const Input& input, const std::string& from, PiVersion version,
                               const ReaderRegistry* readers, KeepSession keep) {
  const ReaderRegistry& registry = readers != nullptr ? *readers : ReaderRegistry::standard();
  // A stream is read once, into an unlinked temporary file, read again as the job needs.
  const Input whole =
      input.kind() != Input::Kind::kStream
          ? input
          : Input::spooled(spool_stream(*input.in(), input.name() == "<stdin>" ? "standard input" : input.name()),
                           input.name());
  SessionOfInput out;
  {
    const OpenedInput opened(whole);
    const ChosenReader chosen = choose_reader(registry, from, opened);
    out.format = chosen.reader->info().name;
    if (!chosen.reader->info().converts) {
      out.session = whole;
      return out;
    }
  }
  // Converted as `pi-hydrate --session` converts it, in the input's own cwd.
  HydrateRequest request;
  request.from = out.format;
  request.cwd_must_exist = false;
  request.pi_version = version;
  request.readers = readers;
  out.converted = true;
  if (keep == KeepSession::kNo) {
    DroppingSink sink;
    out.conversion = hydrate(whole, request, Output::lines(sink));
    return out;
  }
  SpoolSink sink(input.name());
  out.conversion = hydrate(whole, request, Output::lines(sink));
  out.session = Input::spooled(sink.take(), input.name());
  return out;
}

void index_session(const Input& input, const IndexOptions& options, IndexedSession& out) {
  if (input.kind() == Input::Kind::kFile) {
    out.file.fd = ::open(input.name().c_str(), O_RDONLY | O_CLOEXEC);
    if (out.file.fd < 0) throw IoError("cannot open " + input.name() + ": " + std::strerror(errno));
    out.index = build_file_index(out.file.fd, input.name(), options);
    out.lines = make_fd_line_source(out.file.fd, input.name());  // the index keeps positions
    return;
  }
  if (input.kind() == Input::Kind::kSpooled) {
    out.file.fd = ::fcntl(input.fd(), F_DUPFD_CLOEXEC, 0);
    if (out.file.fd < 0) throw IoError("cannot read " + input.name() + ": " + std::strerror(errno));
    out.index = build_file_index(out.file.fd, input.name(), options);
    out.lines = make_fd_line_source(out.file.fd, input.name());
    return;
  }
  out.index = build_session_index(*make_memory_source(input.data()), input.name(), options);
  out.lines = make_memory_line_source(input.data());
}

}  // namespace pihydrate
