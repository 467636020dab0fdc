// One text that holds what an index says about a file, for tests and fuzz
// targets that compare two ways of building it (two threads against one,
// known strings stepped over against scanned, a spool against memory).
#pragma once

#include <sstream>
#include <string>

#include "pihydrate/session_index.h"

namespace pihydrate::test_support {

inline std::string index_summary(const SessionIndex& index) {
  std::ostringstream out;
  out << index.file_size << " lines " << index.line_count << " blank " << index.blank_lines << " bom "
      << index.starts_with_bom << " nl " << index.ends_with_newline << " crlf " << index.crlf_lines << "@"
      << index.first_crlf_line << " cap " << index.entry_cap_hit << " bad " << index.bad_line_count << " utf8 "
      << index.invalid_utf8_count << "\n";
  for (const BadLine& b : index.bad_lines)
    out << "bad " << b.line << ":" << b.column << " " << static_cast<int>(b.problem) << b.is_last_without_newline << " "
        << b.reason << "\n";
  for (std::size_t i = 0; i < index.invalid_utf8_lines.size(); ++i)
    out << "utf8 " << index.invalid_utf8_lines[i] << ":" << index.invalid_utf8_columns[i] << "\n";
  for (const Entry& e : index.entries) {
    out << e.line << " " << e.offset << " " << e.length << " " << static_cast<int>(e.type) << " " << e.id.text() << "@"
        << e.id.column << " " << e.parent_id.text() << " " << e.details().cwd.text() << e.details().target_id.text()
        << e.details().label.text() << " role " << static_cast<int>(e.role) << " content "
        << static_cast<int>(e.content_kind) << " blank " << static_cast<int>(e.content_blank_texts)
        << e.content_has_thinking << e.content_has_other << " api " << static_cast<int>(e.api) << " stop "
        << static_cast<int>(e.stop_reason) << " usage " << static_cast<int>(e.usage_kind)
        << static_cast<int>(e.usage_cost_kind) << " result " << e.tool_call_id.text() << " falsy " << e.falsy
        << " calls";
    for (const ToolCallRef* c = index.calls_begin(e); c != index.calls_end(e); ++c)
      out << " " << c->id << "/" << c->name;
    out << "\n";
  }
  for (std::size_t i = 0; i < index.long_strings.size(); ++i)
    out << "long " << index.long_strings.begin(i) << "+" << index.long_strings.length(i) << "\n";
  return out.str();
}

}  // namespace pihydrate::test_support
