// Thread exports (docs/thread-export.md) as a reader: the converter
// (thread_converter.h) turns the export into a session spooled to a
// temporary file, pi's own entries (raw_thread.cc) and the lossy kinds alike.
#include "readers/thread_export_reader.h"

#include <unistd.h>

#include "core/files.h"
#include "core/mapped_file.h"
#include "core/spool_indexer.h"
#include "readers/head_record.h"
#include "readers/readers.h"
#include "readers/thread_export.h"

namespace pihydrate {
namespace {

// What the reader gives, from what the converter gave.
void take_converted(ConvertedThread& thread, ReadSession& out) {
  out.diagnostics = std::move(thread.diagnostics);
  out.repairs = std::move(thread.repairs);
  out.records_read = thread.entry_count;
  // A thread's derived id and time; none when pi's own header came with raw entries.
  if (!thread.session_id.empty()) out.session_id = thread.session_id;
  if (!thread.timestamp.empty()) out.timestamp = thread.timestamp;
  for (const ThreadOrigin& o : thread.origins) {
    const std::string_view id = thread.id_of(o);
    out.origins.add(
        o.line, o.column,
        ConvertedThread::path_of(o) + (id.empty() ? "" : " (id " + quote_for_message(std::string(id)) + ")"));
  }
}

ThreadOptions thread_options(const ReadOptions& options) {
  ThreadOptions to;
  to.partial = options.partial;
  to.trailer = options.trailer;
  to.max_depth = options.index.max_depth;
  return to;
}

// The export in `bytes`, or in `mapped` (the input file, read in place,
// whose runs a line copies unchanged are read again from `export_fd`
// instead of being spooled), converted into a session spooled to a
// temporary file.
ReadSession convert_export(const std::string& name, const ReadOptions& options, std::string& bytes, MappedFile* mapped,
                           int export_fd) {
  ThreadOptions to = thread_options(options);
  ReadSession out;
  // A big export is never held twice: its converted session goes to a file.
  auto lines = std::make_unique<SpooledLines>();
  lines->spool.fd = make_unlinked_temp("the converted thread");
  // The converter keeps one core busy; the other writes and indexes what it converts.
  SpoolIndexer spool_indexer(lines->spool.fd, name, options.index);
  to.spool = [&spool_indexer](SpoolBlock& block) { spool_indexer.append(block); };
  ConvertedThread thread;
  if (mapped != nullptr) {
    to.borrow_from_export = true;
    to.residency = mapped;  // pages the converter is done with leave memory
    thread = convert_thread_export(mapped->data(), mapped->size(), name, to);
  } else {
    thread = convert_thread_export(bytes, name, to);  // converted in place
  }
  std::string session = std::move(thread.session);
  const bool spooled = thread.spooled;
  take_converted(thread, out);
  if (!out.ok()) return out;
  if (!spooled) {  // a converter that was given no spool
    take_session_text(std::move(session), name, options.index, out);
    return out;
  }
  out.index = spool_indexer.finish();
  lines->lines =
      make_spool_line_source(lines->spool.fd, mapped != nullptr ? export_fd : -1, spool_indexer.take_layout(), name);
  out.lines = std::move(lines);
  return out;
}

// Whether `text` has the member "format":"thread-export" (white space allowed around the colon).
bool has_format_marker(std::string_view text) {
  constexpr std::string_view key = "\"format\"", value = "\"thread-export\"";
  for (std::size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    std::size_t pos = text.find_first_not_of(" \t\r\n", at + key.size());
    if (pos == std::string_view::npos || text[pos] != ':') continue;
    pos = text.find_first_not_of(" \t\r\n", pos + 1);
    if (pos != std::string_view::npos && text.compare(pos, value.size(), value) == 0) return true;
  }
  return false;
}

class ThreadExportFormat final : public Reader {
 public:
  const ReaderInfo& info() const override {
    static const ReaderInfo info{
        "thread-export",        "thread export", "\"format\":\"thread-export\" at its start", "entries", "",
        "docs/thread-export.md"};
    return info;
  }
  int bid(const InputHead& head) const override {
    // The JSONL variant's first line, or a document that fits on its first line.
    rapidjson::Document doc;
    if (!head.lines.empty() && parse_head_record(head.lines[0], doc))
      return json_string(doc, "format") == "thread-export" ? kBidMarker : kBidNone;
    // A document pretty-printed, or too long for the head: the marker among its first members, before its entries.
    const std::string_view start = head.text.substr(0, head.text.find("\"entries\""));
    const std::size_t open = start.find_first_not_of(" \t\r\n");
    return open != std::string_view::npos && start[open] == '{' && has_format_marker(start) ? kBidMarker : kBidNone;
  }
  ReadSession read(const ReaderInput& input, const ReadOptions& options) const override {
    // A file is read in place: the peak memory does not follow the export's size.
    const std::unique_ptr<MappedFile> mapped = input.fd() >= 0 ? MappedFile::map(input.fd()) : nullptr;
    // A mapped file that shrinks under the reader raises SIGBUS, from the
    // first byte read on: what that does is set up before.
    std::unique_ptr<ReaderInput::MappedReadGuard> guard;
    if (mapped) guard = input.guard_mapped_read();
    std::string bytes = mapped ? std::string() : input.read_all();
    return convert_export(input.name(), options, bytes, mapped.get(), input.fd());
  }
};

}  // namespace

ReadSession read_thread_export_file(int fd, const std::string& name, const ReadOptions& options) {
  const std::unique_ptr<MappedFile> mapped = MappedFile::map(fd);
  std::string bytes;
  if (!mapped && ::lseek(fd, 0, SEEK_SET) == 0) bytes = read_all(fd, name);  // mmap failed: read it whole
  return convert_export(name, options, bytes, mapped.get(), fd);
}

const Reader& thread_export_reader() {
  static const ThreadExportFormat reader;
  return reader;
}

}  // namespace pihydrate
