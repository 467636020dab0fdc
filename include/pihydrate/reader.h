// The input formats pi-hydrate reads, behind one interface. A reader
// recognises its format from the input's first lines (bid) and turns the
// input into the pi session it stands for (read); the session path
// (hydrate.h) then hydrates that session like any pi session: --cwd, the
// branch, tool pairing, verification. A registry lists the readers: format
// detection, --from, the help and the hint that says what was tried all
// come from it. docs/architecture.md, "How to add a reader", walks through it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pihydrate/diagnostic.h"
#include "pihydrate/hydrate.h"
#include "pihydrate/session_index.h"

namespace pihydrate {

// The start of an input, what a reader recognises its format from.
struct InputHead {
  // The first bytes, a UTF-8 byte order mark left out: 64 KiB, or more to
  // finish the first line that is not blank (up to 4 MiB).
  std::string_view text;
  // Its lines that are not blank, in order (at most 8), each without its CR;
  // the last may be cut short where `text` ends, unless `whole`.
  std::vector<std::string_view> lines;
  bool whole = false;  // `text` is the whole input
};
// Splits `text` (an input's first bytes) as InputHead describes.
InputHead make_input_head(std::string_view text, bool whole);

// How sure a reader is that an input is in its format; the highest bid wins.
inline constexpr int kBidNone = 0;      // not its format
inline constexpr int kBidShape = 50;    // the records have its shape
inline constexpr int kBidMarker = 100;  // a marker only its format has (a header, a format name)

struct ReaderInfo {
  const char* name;           // "claude-code": what --from takes and reports call the format
  const char* title;          // "Claude Code transcript": in help, messages and phases
  const char* recognised_by;  // "records with \"uuid\" and \"sessionId\"": what bid looks for
  const char* records;        // "Claude Code records": what the summary counts
  const char* kept_at;        // "~/.claude/projects/<dir>/<session id>.jsonl": where the tool keeps them, or ""
  const char* doc;            // "docs/claude-code.md": its mapping rules
  bool converts = true;       // false for pi's own sessions, which are read as they are
};

// Where each line of a session a reader wrote came from in its input, so
// that what the session path finds in the line is reported there.
class SourceMap {
 public:
  struct Origin {
    std::uint64_t line = 0;  // the record's first byte in the input (1-based)
    std::uint64_t column = 0;
    // Bytes the line copies verbatim from the input: a column inside them
    // maps to the same byte of the input (copied_column 0: none).
    std::uint64_t copied_column = 0;  // their first byte in the session line (1-based)
    std::uint64_t copied_size = 0;
    std::uint64_t input_copied_column = 0;  // their first byte in the input's line
    std::uint64_t name_begin = 0;           // the record's name in messages, in names_
    std::uint32_t name_size = 0;
  };
  // The next line's origin; `name` names the record in messages
  // ("entries[3] (id \"m1\")", "assistant record"), or is empty.
  void add(const Origin& origin, std::string_view name);
  void add(std::uint64_t line, std::uint64_t column, std::string_view name);
  std::size_t size() const { return origins_.size(); }
  bool empty() const { return origins_.empty(); }
  const Origin& at(std::size_t line_index) const { return origins_[line_index]; }
  std::string_view name_of(const Origin& o) const { return std::string_view(names_).substr(o.name_begin, o.name_size); }
  // A diagnostic about line N of the session, moved to the input's
  // line:column of its record and prefixed with the record's name. Others
  // (no line, or past the session) are left as they are.
  void map_back(Diagnostic& d) const;

 private:
  std::vector<Origin> origins_;
  std::string names_;
};

// What a reader reads from. The job implements it over a file, a spooled
// stream or bytes in memory.
class ReaderInput {
 public:
  virtual ~ReaderInput() = default;
  virtual const std::string& name() const = 0;  // names the input in diagnostics
  virtual int fd() const = 0;                   // its file (a stream is spooled to one), or -1 for bytes
  virtual std::string read_all() const = 0;     // every byte of it
  // While the returned guard lives, the input may be read mapped: a SIGBUS
  // (the file shrank under the reader) then does what the caller asked
  // (ProcessHooks::exit_on_shrunk_input).
  struct MappedReadGuard {
    virtual ~MappedReadGuard() = default;
  };
  virtual std::unique_ptr<MappedReadGuard> guard_mapped_read() const = 0;
};

struct ReadOptions {
  PartialPolicy partial = PartialPolicy::kDrop;  // an interrupted stream (thread exports, event captures)
  bool trailer = true;                           // session_info, model_change, thinking_level_change at the end
  // --leaf, offered: a reader whose format names entries its own way (a
  // tree of records) writes that branch itself and says so (leaf_taken).
  std::optional<std::string> leaf;
  IndexOptions index;  // how the session a reader gives is indexed: the limits, long strings noted
};

// What a reader gives: the pi session its input stands for, ready for the
// session path.
struct ReadSession {
  SessionIndex index;
  std::unique_ptr<LineSource> lines;             // the session's lines, by the index's offsets
  SourceMap origins;                             // one per line; empty when the lines are the input's own
  Diagnostics diagnostics;                       // the reader's own findings; an error: nothing could be read
  std::map<std::string, std::uint64_t> repairs;  // what was left out or translated, counted
  std::uint64_t records_read = 0;                // what the summary counts (ReaderInfo::records)
  // An id and time the input implies (a thread's derived id, say); the
  // request's win, and without either the session's header gives them.
  std::optional<std::string> session_id;
  std::optional<std::string> timestamp;
  bool leaf_taken = false;  // ReadOptions::leaf chose the branch written
  bool ok() const;
};
// A session written as text (one JSON object per line, the header first),
// indexed as `options` says and read back from memory.
void take_session_text(std::string text, const std::string& name, const IndexOptions& options, ReadSession& out);

class Reader {
 public:
  virtual ~Reader() = default;
  virtual const ReaderInfo& info() const = 0;
  // How sure it is that the input starting with `head` is its format.
  virtual int bid(const InputHead& head) const = 0;
  // Reads the input. What is the input's fault is a diagnostic (with its
  // line:column); IoError is for what is not (a read that fails).
  virtual ReadSession read(const ReaderInput& input, const ReadOptions& options) const = 0;
};

// The readers a job chooses from, in the order they are tried.
class ReaderRegistry {
 public:
  // Every format pi-hydrate reads (src/readers/registry.cc).
  static const ReaderRegistry& standard();

  // Adds a reader after those there; on equal bids the first added wins.
  // The registry keeps the pointer: the reader must outlive it.
  void add(const Reader& reader);
  const std::vector<const Reader*>& readers() const { return readers_; }
  const Reader* find(std::string_view name) const;  // by ReaderInfo::name
  // The reader that bids highest for `head`; none when nobody bids.
  const Reader* choose(const InputHead& head) const;
  // What an input nobody bids for is read as: the first reader (pi's sessions).
  const Reader& fallback() const { return *readers_.front(); }
  // "tried pi session (its first line is ...), thread export (...) ...;
  // give --from to say which it is": the hint for an input nobody bid for.
  std::string tried() const;
  // The names, joined: "pi, thread-export, ..." for messages and help.
  std::string names(std::string_view separator = ", ") const;

 private:
  std::vector<const Reader*> readers_;
};

}  // namespace pihydrate
