// read_session_of (pihydrate.h): an input of any format as the pi session it
// stands for, for the commands that look at pi sessions (tree, context,
// validate).
#include "jobs/session_of_input.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>

#include "jobs/opened_input.h"
#include "pihydrate/errors.h"
#include "pihydrate/reader.h"

namespace pihydrate {
namespace {

// The hydrated session's lines, kept in memory.
class TextSink final : public LineSink {
 public:
  std::string text;
  void write_line(std::string_view line) override { text.append(line).push_back('\n'); }
};

}  // namespace

SessionOfInput read_session_of(const Input& input, const std::string& from, PiVersion version,
                               const ReaderRegistry* readers) {
  const ReaderRegistry& registry = readers != nullptr ? *readers : ReaderRegistry::standard();
  // A stream is read once: it is kept as bytes, read again as the job needs.
  const Input whole =
      input.kind() != Input::Kind::kStream
          ? input
          : Input::bytes(std::string(std::istreambuf_iterator<char>(*input.in()), std::istreambuf_iterator<char>()),
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
  TextSink sink;
  out.converted = true;
  out.conversion = hydrate(whole, request, Output::lines(sink));
  out.session = Input::bytes(std::move(sink.text), input.name());
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
  out.index = build_session_index(*make_memory_source(input.data()), input.name(), options);
  out.lines = make_memory_line_source(input.data());
}

}  // namespace pihydrate
