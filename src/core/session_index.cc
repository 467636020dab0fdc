#include "pihydrate/session_index.h"

#include "core/entry_scanner.h"
#include "core/utf8.h"

namespace pihydrate {

const char* json_kind_name(JsonKind kind) {
  switch (kind) {
    case JsonKind::kMissing: return "missing";
    case JsonKind::kNull: return "null";
    case JsonKind::kFalse: return "false";
    case JsonKind::kTrue: return "true";
    case JsonKind::kNumber: return "a number";
    case JsonKind::kString: return "a string";
    case JsonKind::kArray: return "an array";
    case JsonKind::kObject: return "an object";
  }
  return "?";
}

const EntryDetails Entry::kNoDetails{};

std::string_view Entry::type_text() const {
  switch (type) {
    case EntryType::kNone: return {};
    case EntryType::kSession: return "session";
    case EntryType::kMessage: return "message";
    case EntryType::kCompaction: return "compaction";
    case EntryType::kBranchSummary: return "branch_summary";
    case EntryType::kCustomMessage: return "custom_message";
    case EntryType::kCustom: return "custom";
    case EntryType::kLabel: return "label";
    case EntryType::kSessionInfo: return "session_info";
    case EntryType::kModelChange: return "model_change";
    case EntryType::kThinkingLevelChange: return "thinking_level_change";
    case EntryType::kContextEdit: return "context_edit";
    case EntryType::kUsage: return "usage";
    case EntryType::kUnknown: return details().unknown_type;
  }
  return {};
}

std::string_view StringArena::add(std::string_view text) {
  if (text.empty()) return {};
  constexpr std::size_t kBlock = 1 << 16;
  if (text.size() > kBlock / 4) {  // big strings live apart, so blocks never grow
    large_.emplace_back(text);
    return large_.back();
  }
  if (blocks_.empty() || used_in_last_ + text.size() > kBlock) {
    blocks_.emplace_back();
    blocks_.back().reserve(kBlock);
    used_in_last_ = 0;
  }
  std::string& block = blocks_.back();
  block.append(text.data(), text.size());  // within the reserved capacity: no reallocation
  std::string_view view(block.data() + used_in_last_, text.size());
  used_in_last_ += text.size();
  return view;
}

SessionIndex build_session_index(ByteSource& source, std::string display_name, const IndexOptions& options) {
  SessionIndex index;
  index.file = std::move(display_name);
  EntryScanner scanner(*index.arena, index.tool_calls, index.details, options.max_depth);
  LineReader reader(source, options.reader);
  Line line;
  while (reader.next(line)) {
    index.line_count = line.number;
    index.ends_with_newline = line.has_newline;
    if (line.too_long) {
      BadLine bad;
      bad.line = line.number;
      bad.column = 1;
      bad.problem = LineProblem::kTooLong;
      bad.is_last_without_newline = !line.has_newline;
      bad.reason = std::to_string(line.length) + " bytes";
      if (index.bad_line_count++ < SessionIndex::kMaxKeptProblems) index.bad_lines.push_back(std::move(bad));
      continue;
    }
    std::string_view bytes = line.bytes;
    std::size_t start = 0;
    if (line.number == 1 && bytes.size() >= 3 && bytes.substr(0, 3) == "\xEF\xBB\xBF") {
      index.starts_with_bom = true;
      start = 3;
    }
    if (!bytes.empty() && bytes.back() == '\r') {
      if (index.crlf_lines++ == 0) index.first_crlf_line = line.number;
    }
    std::size_t bad_utf8 = find_invalid_utf8(bytes);
    if (bad_utf8 != kUtf8Valid && index.invalid_utf8_count++ < SessionIndex::kMaxKeptProblems) {
      index.invalid_utf8_lines.push_back(line.number);
      index.invalid_utf8_columns.push_back(bad_utf8 + 1);
    }

    Entry entry;
    BadLine bad;
    switch (scanner.scan(line.data, line.bytes.size(), start, entry, bad)) {
      case ScanStatus::kBlank:
        ++index.blank_lines;
        break;
      case ScanStatus::kBad:
        bad.line = line.number;
        bad.is_last_without_newline = !line.has_newline;
        if (index.bad_line_count++ < SessionIndex::kMaxKeptProblems) index.bad_lines.push_back(std::move(bad));
        break;
      case ScanStatus::kParsed:
        if (index.entries.size() >= options.max_entries) {
          index.entry_cap_hit = true;
          index.file_size = reader.bytes_read();
          return index;
        }
        entry.line = line.number;
        entry.offset = line.offset;
        entry.length = line.length;
        index.entries.push_back(entry);
        break;
    }
  }
  index.file_size = reader.bytes_read();
  return index;
}

}  // namespace pihydrate
