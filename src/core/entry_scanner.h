// One line of JSON in, one Entry out: a SAX pass that keeps only the members
// pi's loader and our rules look at. No DOM is built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string_view>
#include <utility>
#include <vector>

#include "pihydrate/session_index.h"

namespace pihydrate {

enum class ScanStatus { kParsed, kBlank, kBad };

// True for a line that JavaScript's String.prototype.trim() empties.
bool is_js_blank(std::string_view bytes);

class EntryScanner {
 public:
  EntryScanner(StringArena& arena, std::vector<ToolCallRef>& tool_calls, std::deque<EntryDetails>& details,
               std::size_t max_depth)
      : arena_(arena), tool_calls_(tool_calls), details_(details), max_depth_(max_depth) {}

  // Scans one line, `size` bytes at `data` with a '\0' at data[size], from
  // byte `start` on (past a BOM); columns stay relative to the line's first
  // byte. The line is parsed in place and left modified. On kParsed fills
  // `entry` (whose line/offset/length the caller sets); on kBad fills `bad`.
  // `line_offset`: where the line starts in the source, for KnownStrings.
  ScanStatus scan(char* data, std::size_t size, std::size_t start, Entry& entry, BadLine& bad,
                  std::uint64_t line_offset = 0);
  // Not owned; null (the default): every string is scanned.
  void set_known_strings(const KnownStrings* known) { known_strings_ = known; }
  // Whether to note the line's long strings (LongStrings::kMinLength bytes
  // or more) that the handler ignores.
  void set_record_long_strings(bool on) { record_long_strings_ = on; }
  // After scan(): the last line's long strings, as (offset in the line,
  // length), when it was read by the fast path and is valid UTF-8; else none.
  const std::vector<std::pair<std::uint32_t, std::uint32_t>>& line_long_strings() const { return line_long_strings_; }

  // The last scanned line's UTF-8, as find_invalid_utf8 gives it for the
  // line as it was before scan(): the offset of its first invalid sequence,
  // or kUtf8Valid. The fast path checks it as it reads the line.
  std::size_t utf8_verdict() const { return utf8_verdict_; }

  // Whether entries keep their timestamps' text (IndexOptions::keep_timestamps).
  void set_keep_timestamps(bool on) { keep_timestamps_ = on; }

  // Tests compare the fast path with RapidJSON alone; it is on by default.
  void set_fast_path(bool on) { fast_path_ = on; }

 private:
  StringArena& arena_;
  std::vector<ToolCallRef>& tool_calls_;
  std::deque<EntryDetails>& details_;
  std::size_t max_depth_;
  bool fast_path_ = true;
  const KnownStrings* known_strings_ = nullptr;
  bool record_long_strings_ = false;
  bool keep_timestamps_ = true;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> line_long_strings_;
  std::size_t utf8_verdict_ = 0;
  std::vector<char> scratch_;  // the line is parsed in a copy, so it can be parsed again
};

}  // namespace pihydrate
