// JSONL framing (jsonl_lines.h).
#include "readers/jsonl_lines.h"

namespace pihydrate {

void for_each_jsonl_line(std::string_view input, const std::function<bool(const JsonlLine&)>& visit) {
  std::size_t pos = input.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  std::size_t start = 0;
  for (std::uint64_t number = 1; pos <= input.size(); ++number) {
    const std::size_t nl = input.find('\n', pos);
    std::size_t end = nl == std::string_view::npos ? input.size() : nl;
    if (end > pos && input[end - 1] == '\r') --end;
    JsonlLine line;
    line.number = number;
    line.start = start;
    line.begin = pos;
    line.text = input.substr(pos, end - pos);
    line.last_without_newline = nl == std::string_view::npos;
    if (line.text.find_first_not_of(" \t") != std::string_view::npos && !visit(line)) return;
    if (nl == std::string_view::npos) return;
    pos = start = nl + 1;
  }
}

}  // namespace pihydrate
