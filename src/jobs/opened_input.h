// An input opened for a job (pihydrate.h's Input): a file, a stream spooled
// to an unlinked temporary file (here, or before: Input::spooled), or bytes
// in memory; the reader it is read
// with, chosen by the registry from its first lines or named by --from.
#pragma once

#include <sys/stat.h>

#include <functional>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>

#include "core/files.h"
#include "pihydrate/pihydrate.h"
#include "pihydrate/reader.h"

namespace pihydrate {

class OpenedInput final : public ReaderInput {
 public:
  // Opens a file (IoError when it cannot be, or is a directory) or spools a stream.
  explicit OpenedInput(const Input& input);

  const std::string& name() const override { return name_; }
  int fd() const override { return fd_.fd; }
  std::string read_all() const override;
  std::unique_ptr<MappedReadGuard> guard_mapped_read() const override;

  // An Input::bytes's bytes; empty for the others.
  std::string_view bytes() const { return bytes_ != nullptr ? std::string_view(*bytes_) : std::string_view(); }
  // A file's path, which an output must not replace; empty for the others.
  const std::string& path() const { return path_; }
  // The input as Input::bytes when it is not a file (a stream read back from its spool).
  Input as_input() const;
  // A file must not change while it is read: the session path copies lines
  // by the offsets its index found, and a thread export is read in place.
  // Size, mtime and ctime are compared (ctime cannot be set back, as mtime can).
  bool changed() const;
  // What a SIGBUS while the input is read mapped does (ProcessHooks::exit_on_shrunk_input),
  // and the directories it removes then.
  std::function<std::string(const Diagnostic&)> exit_on_shrunk_input;
  const std::vector<boost::filesystem::path>* made_directories = nullptr;

 private:
  std::string name_;
  std::string path_;
  Fd fd_;
  const std::string* bytes_ = nullptr;  // an Input::bytes's
  bool check_unchanged_ = false;
  struct stat before_ {};
};

// The reader for `input`: the one named `from` (std::invalid_argument when
// the registry has none of that name), else the one that bids highest for
// its first lines, else the registry's fallback (`guessed` is then false).
struct ChosenReader {
  const Reader* reader = nullptr;
  bool recognised = true;  // false: nobody bid, and the fallback reads it
};
ChosenReader choose_reader(const ReaderRegistry& registry, const std::string& from, const OpenedInput& input);

// "reading the pi session", "converting the thread export": a phase's name (ProcessHooks::on_phase).
std::string reading_phase(const ReaderInfo& info);

// PH904: the input changed while it was read.
Diagnostic input_changed(const std::string& file, std::string message);
// What PH904 says when the input ended early: mapped (SIGBUS) or on a second read.
extern const char* const kInputShrank;

}  // namespace pihydrate
