// Hydration: turn a pi session (v1, v2 or v3) into a clean, linear v3 session
// for a new working directory, whose pi view is the same conversation.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pihydrate/diagnostic.h"
#include "pihydrate/formats.h"
#include "pihydrate/pi_view.h"
#include "pihydrate/session_index.h"

namespace pihydrate {

enum class ToolPolicy : std::uint8_t { kPair, kFlatten };
// A thread export's interrupted chunk stream (docs/thread-export.md R6): dropped, kept (aborted) or kept as text.
enum class PartialPolicy : std::uint8_t { kDrop, kKeep, kText };
enum class ThinkingPolicy : std::uint8_t { kKeep, kDrop };

struct HydrateOptions {
  std::string cwd;  // written to the header as given (the CLI makes it absolute); empty: the input's own
  ToolPolicy tools = ToolPolicy::kPair;
  ThinkingPolicy thinking = ThinkingPolicy::kKeep;
  std::size_t flatten_max_chars = 4000;
  std::optional<std::string> leaf_id;  // --leaf
  std::optional<std::string> label;    // --label
  std::optional<std::string> session_id;
  std::optional<std::string> timestamp;
  bool prune_compacted = false;
  PiVersion pi_version = newest_pi_version();
  IndexOptions index;
};

// What happened, for the summary on stderr and --report json.
struct HydrateReport {
  std::uint64_t entries_read = 0;                // parsed lines of the input, header included
  std::uint64_t entries_written = 0;             // lines written, header included
  std::uint64_t lines_pi_drops = 0;              // lines pi would skip silently
  std::map<std::string, std::uint64_t> repairs;  // kind -> count
  Diagnostics diagnostics;                       // warnings about the input, and the errors that stopped hydration
  std::string session_id;
  std::string timestamp;
  // The input's long strings (SessionIndex::long_strings, when its index
  // noted them) that the output copies unchanged, at their offsets in the
  // output: verifying the output steps over them (KnownLongStrings), since
  // indexing the input checked them already.
  LongStrings carried;
  bool ok() const;
};

// Random access to the input's lines (pass 2 splices their bytes). Two
// threads read at once, each with its own scratch string.
class LineSource {
 public:
  virtual ~LineSource() = default;
  // The bytes [offset, offset + length): a view of the source's own memory,
  // or of `scratch`, filled for the purpose. A file that ends before them
  // throws InputShrankError.
  virtual std::string_view read(std::uint64_t offset, std::uint64_t length, std::string& scratch) = 0;
};
std::unique_ptr<LineSource> make_fd_line_source(int fd, std::string name);
std::unique_ptr<LineSource> make_memory_line_source(std::string bytes);

// Where output lines go (each call is one line without '\n'). Calls never
// overlap, but hydrate_session makes its write_lines calls from a thread of
// its own, so a sink must not depend on the calling thread.
class LineSink {
 public:
  virtual ~LineSink() = default;
  virtual void write_line(std::string_view line) = 0;
  // Whole lines, each ending with '\n' (by default, one write_line each).
  virtual void write_lines(std::string_view lines);
  // A hint: about this many more bytes will be written (by default, ignored).
  virtual void expect_bytes(std::uint64_t) {}
};

// Plans and writes the hydrated session. Returns false (with errors in the
// report) when the input cannot be hydrated; nothing useful was written then.
bool hydrate_session(const SessionIndex& index, LineSource& source, const HydrateOptions& options, LineSink& sink,
                     HydrateReport& report);

}  // namespace pihydrate
