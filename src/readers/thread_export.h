// Internal: the thread export converter's entry point and its tuning. The
// public call is hydrate_thread (pihydrate.h). convert_thread_export turns a
// thread export (docs/thread-export.md) into a linear session in pi's own
// line format; hydrate_session then writes it like any other session, so
// both inputs share ids, tool policies and the writer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pihydrate/diagnostic.h"
#include "pihydrate/hydrate.h"
#include "pihydrate/spool.h"

namespace pihydrate {

// What the converter tells the owner of the export's bytes, so a caller that
// maps the export's file (MappedFile) can drop the pages it is done with:
// memory then does not follow the export's size.
class ExportResidency {
 public:
  virtual ~ExportResidency() = default;
  // The bytes before `offset` are not needed again soon. They may still be
  // read, so they must stay valid (a mapped file's pages fault back in).
  virtual void release_before(std::size_t offset) = 0;
  // The converter rewrote [begin, end) in place; those bytes must keep
  // their new content.
  virtual void rewritten(std::size_t begin, std::size_t end) = 0;
  // The bytes in [begin, end) are not needed again soon. Unlike
  // release_before it keeps no state, so two threads reading different parts
  // of the export may call it at once. By default it does nothing.
  virtual void release_range(std::size_t begin, std::size_t end) {
    (void)begin;
    (void)end;
  }
};

struct ThreadOptions {
  PartialPolicy partial = PartialPolicy::kDrop;
  bool trailer = true;          // session_info, model_change, thinking_level_change at the end
  std::size_t max_depth = 512;  // JSON nesting cap of the export (--max-depth)
  // When set, the converted session is handed over in blocks of whole lines
  // (about a MiB each) instead of being kept in ConvertedThread::session, so a
  // big export is not held in memory twice (SpoolIndexer::append takes them).
  // The callee takes the block and leaves an empty one to fill again.
  std::function<void(SpoolBlock& block)> spool;
  // With a spool: runs of at least `min_borrowed_run` bytes that a line
  // copies unchanged from the export are handed over as borrowed runs (see
  // spool.h), to be read back from the export's file. Only for bytes that
  // are the file's from its first byte on; never once the converter
  // rewrote any of them (a lone surrogate).
  bool borrow_from_export = false;
  std::size_t min_borrowed_run = 1024;
  ExportResidency* residency = nullptr;  // told which bytes can leave memory (optional)
};

// Where a line of the converted session came from, for messages about it.
// A big export converts to hundreds of thousands of lines, so an origin is
// small: its path and id are read through ConvertedThread.
struct ThreadOrigin {
  static constexpr std::uint32_t kThread = UINT32_MAX;  // the thread object (header, trailer)
  std::uint32_t entry = kThread;                        // index in the export's entries
  std::uint32_t id_size = 0;                            // the entry's id: ConvertedThread::origin_ids from id_begin
  std::uint64_t id_begin = 0;
  std::uint64_t line = 0;  // position of the entry in the export (1-based)
  std::uint64_t column = 0;
};

struct ConvertedThread {
  // Header + one line per entry, '\n'-terminated; empty when spooled.
  std::string session;
  bool spooled = false;               // the lines went to ThreadOptions::spool
  std::uint64_t session_bytes = 0;    // its size, spooled or not
  std::vector<ThreadOrigin> origins;  // per line of `session` (index 0: the header)
  std::string origin_ids;             // the export's entry ids, one after another: origins name theirs by offset
  // "entries[12]", or "thread".
  static std::string path_of(const ThreadOrigin& o);
  std::string_view id_of(const ThreadOrigin& o) const {
    return std::string_view(origin_ids).substr(o.id_begin, o.id_size);
  }
  std::string session_id;         // derived from thread.id
  std::string timestamp;          // thread.createdAt, else the first entry's time
  std::uint64_t entry_count = 0;  // entries in the export
  std::map<std::string, std::uint64_t> repairs;
  Diagnostics diagnostics;  // errors stop the conversion; warnings do not
  bool ok() const;
};

// A message about a thread export at `line`:`column`: PH601 (an error) or
// PH602 (a warning), "path: message" (just the message without a path).
Diagnostic thread_export_diagnostic(Severity severity, const std::string& file, std::uint64_t line,
                                    std::uint64_t column, const std::string& path, const std::string& message);

// Converts the bytes of a thread export (JSON document or JSONL variant).
// `file` names the input in diagnostics. `bytes` is edited in place: an
// escaped lone UTF-16 surrogate, which JSON.parse accepts and RapidJSON does
// not, becomes \uFFFD (same length) before parsing.
ConvertedThread convert_thread_export(std::string& bytes, const std::string& file, const ThreadOptions& options);
ConvertedThread convert_thread_export(char* bytes, std::size_t size, const std::string& file,
                                      const ThreadOptions& options);

}  // namespace pihydrate
