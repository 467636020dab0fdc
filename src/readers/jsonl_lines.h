// JSONL framing, the same for every reader of a JSON-lines format (Claude
// Code, Codex, pi's event captures): lines split on LF, a CR before the LF
// dropped, a UTF-8 byte order mark at the start stepped over, blank lines
// skipped. What a line that is not JSON means is the reader's business.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>

namespace pihydrate {

struct JsonlLine {
  std::uint64_t number = 0;           // 1-based
  std::size_t start = 0;              // offset of the line's first byte (columns count from it)
  std::size_t begin = 0;              // offset of `text` (after a BOM on line 1)
  std::string_view text;              // the line without its CR and LF; never blank
  bool last_without_newline = false;  // the input ends inside this line (a writer cut short?)
  // The 1-based column of `offset` (an offset into the whole input).
  std::uint64_t column_of(std::size_t offset) const { return offset - start + 1; }
};

// Calls `visit` for each line that is not blank, in order, until it returns false.
void for_each_jsonl_line(std::string_view input, const std::function<bool(const JsonlLine&)>& visit);

}  // namespace pihydrate
