// One SAX pass over a session line: the entry's type, ids, role, tool call ids and value positions.
#include "core/entry_scanner.h"

#include "core/fast_sax.h"
#include "core/json_spans.h"
#include "core/utf8.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

namespace pihydrate {
namespace {

enum class Frame : std::uint8_t { kRoot, kMessage, kUsage, kContent, kBlock, kIgnored };

enum class RootKey : std::uint8_t {
  kOther,
  kType,
  kId,
  kParentId,
  kTimestamp,
  kVersion,
  kCwd,
  kMessage,
  kFirstKeptEntryId,
  kFirstKeptEntryIndex,
  kTargetId,
  kLabel,
  kFromId,
  kSummary,
};
enum class MessageKey : std::uint8_t {
  kOther,
  kRole,
  kContent,
  kUsage,
  kStopReason,
  kTimestamp,
  kToolCallId,
  kExcludeFromContext,
  kApi
};
enum class BlockKey : std::uint8_t { kOther, kType, kId, kName, kText };

RootKey root_key(std::string_view k) {
  switch (k.size()) {
    case 2:
      if (k == "id") return RootKey::kId;
      break;
    case 3:
      if (k == "cwd") return RootKey::kCwd;
      break;
    case 4:
      if (k == "type") return RootKey::kType;
      break;
    case 5:
      if (k == "label") return RootKey::kLabel;
      break;
    case 6:
      if (k == "fromId") return RootKey::kFromId;
      break;
    case 7:
      if (k == "version") return RootKey::kVersion;
      if (k == "message") return RootKey::kMessage;
      if (k == "summary") return RootKey::kSummary;
      break;
    case 8:
      if (k == "parentId") return RootKey::kParentId;
      if (k == "targetId") return RootKey::kTargetId;
      break;
    case 9:
      if (k == "timestamp") return RootKey::kTimestamp;
      break;
    case 16:
      if (k == "firstKeptEntryId") return RootKey::kFirstKeptEntryId;
      break;
    case 19:
      if (k == "firstKeptEntryIndex") return RootKey::kFirstKeptEntryIndex;
      break;
    default: break;
  }
  return RootKey::kOther;
}

MessageKey message_key(std::string_view k) {
  if (k == "role") return MessageKey::kRole;
  if (k == "content") return MessageKey::kContent;
  if (k == "usage") return MessageKey::kUsage;
  if (k == "stopReason") return MessageKey::kStopReason;
  if (k == "timestamp") return MessageKey::kTimestamp;
  if (k == "toolCallId") return MessageKey::kToolCallId;
  if (k == "excludeFromContext") return MessageKey::kExcludeFromContext;
  if (k == "api") return MessageKey::kApi;
  return MessageKey::kOther;
}

BlockKey block_key(std::string_view k) {
  if (k == "type") return BlockKey::kType;
  if (k == "id") return BlockKey::kId;
  if (k == "name") return BlockKey::kName;
  if (k == "text") return BlockKey::kText;
  return BlockKey::kOther;
}

EntryType entry_type_of(std::string_view t) {
  for (auto type = EntryType::kSession; type != EntryType::kUnknown;
       type = static_cast<EntryType>(static_cast<int>(type) + 1))
    if (entry_type_name(type) == t) return type;
  return EntryType::kUnknown;
}

Role role_of(std::string_view r) {
  if (r == "user") return Role::kUser;
  if (r == "assistant") return Role::kAssistant;
  if (r == "toolResult") return Role::kToolResult;
  if (r == "custom") return Role::kCustom;
  if (r == "hookMessage") return Role::kHookMessage;
  if (r == "bashExecution") return Role::kBashExecution;
  if (r == "branchSummary") return Role::kBranchSummary;
  if (r == "compactionSummary") return Role::kCompactionSummary;
  if (r == "system") return Role::kSystem;
  return Role::kUnknown;
}

StopReason stop_reason_of(std::string_view s) {
  if (s == "stop") return StopReason::kStop;
  if (s == "length") return StopReason::kLength;
  if (s == "toolUse") return StopReason::kToolUse;
  if (s == "error") return StopReason::kError;
  if (s == "aborted") return StopReason::kAborted;
  if (s == "pending") return StopReason::kPending;
  return StopReason::kOther;
}

bool number_text_is_zero(std::string_view text) {
  std::string copy(text);
  return std::strtod(copy.c_str(), nullptr) == 0.0;  // JS: 0, -0 and underflow are falsy
}

class Handler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Handler> {
 public:
  Handler(const char* line_begin, const char* line_end, Entry& entry, StringArena& arena,
          std::vector<ToolCallRef>& calls, std::deque<EntryDetails>& details, std::size_t max_depth,
          const std::vector<std::pair<std::size_t, std::string>>& patched)
      : begin_(line_begin),
        end_(line_end),
        e_(entry),
        arena_(arena),
        calls_(calls),
        details_(details),
        max_depth_(max_depth),
        patched_(patched) {
    frames_.reserve(16);
  }

  bool depth_exceeded() const { return depth_exceeded_; }
  void keep_timestamps(bool on) { keep_timestamps_ = on; }

  // RapidJSON hands every string over decoded; the fast path only those
  // the handler reads (see string_is_blank).
  void strings_arrive_decoded() { strings_decoded_ = true; }

  // FastSaxReader checks UTF-8 inside strings as it scans them: a line is
  // read once instead of twice (see EntryScanner::utf8_verdict).
  static constexpr bool kChecksUtf8 = true;

  // Long strings an earlier pass checked are stepped over (see KnownStrings).
  void know_string_ends(const KnownStrings* known, std::uint64_t line_offset) {
    known_ = known != nullptr && !known->empty() ? known : nullptr;
    if (known_) known_min_length_ = std::max<std::size_t>(known_->min_length(), 64);  // shorter: not worth a lookup
    line_offset_ = line_offset;
  }
  // Shorter strings are not looked up.
  std::size_t known_string_min_length() const { return known_min_length_; }
  void record_long_strings(std::vector<std::pair<std::uint32_t, std::uint32_t>>* into) { long_strings_ = into; }
  void ignored_string(const char* quote, const char* past_end) {
    if (long_strings_ && past_end - quote >= static_cast<std::ptrdiff_t>(LongStrings::kMinLength))
      long_strings_->emplace_back(static_cast<std::uint32_t>(quote - begin_),
                                  static_cast<std::uint32_t>(past_end - quote));
    // A text or a content string is not read, only looked at up to its
    // first character that is not white space.
    if (reads_blankness())
      unread_is_blank_ =
          json_string_is_blank(std::string_view(quote + 1, static_cast<std::size_t>(past_end - quote - 2)));
  }
  bool knows_string_ends() const { return known_ != nullptr; }
  const char* known_string_end(const char* quote) {
    const std::uint64_t at = line_offset_ + static_cast<std::uint64_t>(quote - begin_);
    const std::uint64_t end = known_->string_end(at);
    if (end <= at + 1 || end - at > static_cast<std::uint64_t>(end_ - quote)) return nullptr;
    const char* past = quote + (end - at);
    return past[-1] == '"' ? past : nullptr;
  }

  // FastSaxReader's questions. After Start*: is the container just opened
  // ignored (its contents need no events)?
  bool skips_current() const { return frames_.back() == Frame::kIgnored; }
  // Is the next scalar's text read? Only the members record_* keeps text of.
  bool wants_text() const {
    if (frames_.empty()) return true;  // the line's root value: falsy needs it
    switch (frames_.back()) {
      case Frame::kRoot: return root_key_ != RootKey::kOther && root_key_ != RootKey::kMessage;
      case Frame::kMessage:
        return message_key_ == MessageKey::kRole || message_key_ == MessageKey::kStopReason ||
               message_key_ == MessageKey::kTimestamp || message_key_ == MessageKey::kToolCallId ||
               message_key_ == MessageKey::kApi;
      case Frame::kBlock:
        return block_key_ == BlockKey::kType || block_key_ == BlockKey::kId || block_key_ == BlockKey::kName;
      default: return false;
    }
  }

  bool Null() { return scalar(JsonKind::kNull, {}); }
  bool Bool(bool b) { return scalar(b ? JsonKind::kTrue : JsonKind::kFalse, {}); }
  // In-situ, RawNumber's text is not '\0'-terminated (Tencent/rapidjson#798):
  // only `n` bytes are the number.
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    // A number too big for a double was parsed as an equal-length zero; its
    // fields keep the original text (JSON.parse reads it as +-Infinity).
    for (const auto& [at, text] : patched_)
      if (static_cast<std::size_t>(s - begin_) == at) return scalar(JsonKind::kNumber, text);
    return scalar(JsonKind::kNumber, {s, n});
  }
  bool String(const char* s, rapidjson::SizeType n, bool) { return scalar(JsonKind::kString, {s, n}); }

  bool Key(const char* s, rapidjson::SizeType n, bool) {
    // The key's text sits where it was in the line (in-situ); its value
    // starts after the ':' that follows. Only bytes inside the key's own
    // quotes were rewritten, so the ':' is found by scanning forward.
    const char* p = s + n;
    while (p < end_ && *p != ':') ++p;
    if (p < end_) ++p;
    while (p < end_ && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) ++p;
    value_column_ = static_cast<std::uint32_t>(p - begin_) + 1;
    std::string_view k(s, n);
    switch (frames_.back()) {
      case Frame::kRoot: root_key_ = root_key(k); break;
      case Frame::kMessage: message_key_ = message_key(k); break;
      case Frame::kUsage: usage_is_cost_ = (k == "cost"); break;
      case Frame::kBlock: block_key_ = block_key(k); break;
      default: break;
    }
    return true;
  }

  bool StartObject() { return open(JsonKind::kObject); }
  bool StartArray() { return open(JsonKind::kArray); }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool EndArray(rapidjson::SizeType) { return close(); }

 private:
  std::uint32_t value_column() const { return value_column_; }

  // Whether the string value about to be recorded is a text block's text or
  // a message's content, whose blankness is kept.
  bool reads_blankness() const {
    return !frames_.empty() && ((frames_.back() == Frame::kBlock && block_key_ == BlockKey::kText) ||
                                (frames_.back() == Frame::kMessage && message_key_ == MessageKey::kContent));
  }
  // Blankness of such a string: from its decoded text, or, on the fast
  // path, from what ignored_string saw of it.
  bool string_is_blank(std::string_view text) const { return strings_decoded_ ? is_js_blank(text) : unread_is_blank_; }

  void set(KindField& f, JsonKind kind) {
    f.kind = kind;
    f.column = value_column();
  }

  void set(Field& f, JsonKind kind, std::string_view text) {
    f.kind = kind;
    f.set_text((kind == JsonKind::kString || kind == JsonKind::kNumber) ? arena_.add(text) : std::string_view());
    f.column = value_column();
  }

  // A timestamp's kind and column always; its text only when kept.
  void set_timestamp(Field& f, JsonKind kind, std::string_view text) {
    if (keep_timestamps_) return set(f, kind, text);
    f.kind = kind;
    f.column = value_column();
  }

  // The entry's rarer members, created on the first one the line has.
  EntryDetails& details() {
    if (!own_details_) {
      own_details_ = &details_.emplace_back();
      e_.details_ = own_details_;
    }
    return *own_details_;
  }

  // Records a member value; `text` is set for strings and numbers.
  void record(JsonKind kind, std::string_view text) {
    if (frames_.empty()) {  // the line's root value is not an object
      e_.root = kind;
      e_.falsy = kind == JsonKind::kNull || kind == JsonKind::kFalse || (kind == JsonKind::kString && text.empty()) ||
                 (kind == JsonKind::kNumber && number_text_is_zero(text));
      return;
    }
    switch (frames_.back()) {
      case Frame::kRoot: record_root(kind, text); break;
      case Frame::kMessage: record_message(kind, text); break;
      case Frame::kUsage:
        if (usage_is_cost_) e_.usage_cost_kind = kind;
        break;
      case Frame::kContent:  // an element that is not a block (a block is judged when it closes)
        if (kind != JsonKind::kObject) e_.content_has_other = true;
        break;
      case Frame::kBlock:
        if (block_key_ == BlockKey::kText)
          block_text_ = kind == JsonKind::kString && !string_is_blank(text) ? BlockText::kNonBlank : BlockText::kBlank;
        if (block_key_ == BlockKey::kType) block_type_ = kind == JsonKind::kString ? std::string(text) : std::string();
        if (block_key_ == BlockKey::kId) {
          block_id_kind_ = kind;
          block_id_ = kind == JsonKind::kString ? std::string(text) : std::string();
          block_id_column_ = value_column();
        }
        if (block_key_ == BlockKey::kName) block_name_ = kind == JsonKind::kString ? std::string(text) : std::string();
        break;
      default: break;
    }
  }

  void record_root(JsonKind kind, std::string_view text) {
    switch (root_key_) {
      case RootKey::kType:
        set(e_.type_field, kind);
        e_.type = kind == JsonKind::kString ? entry_type_of(text) : EntryType::kNone;
        if (e_.type == EntryType::kUnknown) details().unknown_type = arena_.add(text);
        break;
      case RootKey::kId: set(e_.id, kind, text); break;
      case RootKey::kParentId: set(e_.parent_id, kind, text); break;
      case RootKey::kTimestamp: set_timestamp(e_.timestamp, kind, text); break;
      case RootKey::kVersion: set(details().version, kind, text); break;
      case RootKey::kCwd: set(details().cwd, kind, text); break;
      case RootKey::kMessage:
        reset_message();
        set(e_.message, kind);
        break;
      case RootKey::kFirstKeptEntryId: set(details().first_kept_entry_id, kind, text); break;
      case RootKey::kFirstKeptEntryIndex: set(details().first_kept_entry_index, kind, text); break;
      case RootKey::kTargetId: set(details().target_id, kind, text); break;
      case RootKey::kLabel: set(details().label, kind, text); break;
      case RootKey::kFromId: set(details().from_id, kind, text); break;
      case RootKey::kSummary:  // only its truthiness is read: a string's first byte tells
        set(details().summary, kind, kind == JsonKind::kString ? text.substr(0, 1) : text);
        break;
      case RootKey::kOther: break;
    }
  }

  void record_message(JsonKind kind, std::string_view text) {
    switch (message_key_) {
      case MessageKey::kRole:
        set(e_.role_field, kind);
        e_.role = kind == JsonKind::kString ? role_of(text) : Role::kNone;
        if (e_.role == Role::kUnknown) details().unknown_role = arena_.add(text);
        break;
      case MessageKey::kContent:
        e_.content_kind = kind;
        e_.tool_calls_count = 0;  // a repeated key: the last one wins, as in JSON.parse
        calls_.resize(e_.tool_calls_begin);
        e_.content_blank_texts = 0;
        e_.content_has_thinking = false;
        e_.content_has_other = kind == JsonKind::kString && !string_is_blank(text);
        break;
      case MessageKey::kUsage:
        e_.usage_kind = kind;
        e_.usage_cost_kind = JsonKind::kMissing;
        break;
      case MessageKey::kStopReason:
        set(e_.stop_reason_field, kind);
        e_.stop_reason = kind == JsonKind::kString ? stop_reason_of(text) : StopReason::kNone;
        break;
      case MessageKey::kTimestamp: set_timestamp(e_.message_timestamp, kind, text); break;
      case MessageKey::kToolCallId: set(e_.tool_call_id, kind, text); break;
      case MessageKey::kExcludeFromContext: e_.exclude_from_context = kind == JsonKind::kTrue; break;
      case MessageKey::kApi:
        e_.api = kind != JsonKind::kString      ? MessageApi::kNone
                 : text == "anthropic-messages" ? MessageApi::kAnthropicMessages
                                                : MessageApi::kOther;
        break;
      case MessageKey::kOther: break;
    }
  }

  void reset_message() {
    Entry fresh;
    e_.role = fresh.role;
    e_.role_field = fresh.role_field;
    e_.content_kind = fresh.content_kind;
    e_.usage_kind = fresh.usage_kind;
    e_.usage_cost_kind = fresh.usage_cost_kind;
    e_.stop_reason = fresh.stop_reason;
    e_.stop_reason_field = fresh.stop_reason_field;
    e_.message_timestamp = fresh.message_timestamp;
    e_.tool_call_id = fresh.tool_call_id;
    e_.exclude_from_context = false;
    e_.api = fresh.api;
    e_.content_blank_texts = 0;
    e_.content_has_thinking = e_.content_has_other = false;
    e_.tool_calls_count = 0;
    calls_.resize(e_.tool_calls_begin);
  }

  bool scalar(JsonKind kind, std::string_view text) {
    if (frames_.empty() || frames_.back() != Frame::kIgnored) record(kind, text);
    return true;
  }

  bool open(JsonKind kind) {
    if (frames_.size() >= max_depth_) {
      depth_exceeded_ = true;
      return false;
    }
    Frame child = Frame::kIgnored;
    if (frames_.empty()) {
      e_.root = kind;
      child = kind == JsonKind::kObject ? Frame::kRoot : Frame::kIgnored;
    } else {
      Frame parent = frames_.back();
      if (parent != Frame::kIgnored) record(kind, {});
      if (parent == Frame::kRoot && root_key_ == RootKey::kMessage && kind == JsonKind::kObject) {
        child = Frame::kMessage;
      } else if (parent == Frame::kMessage && message_key_ == MessageKey::kUsage && kind == JsonKind::kObject) {
        child = Frame::kUsage;
      } else if (parent == Frame::kMessage && message_key_ == MessageKey::kContent && kind == JsonKind::kArray) {
        child = Frame::kContent;
      } else if (parent == Frame::kContent && kind == JsonKind::kObject) {
        child = Frame::kBlock;
        block_type_.clear();
        block_id_.clear();
        block_name_.clear();
        block_id_kind_ = JsonKind::kMissing;
        block_id_column_ = 0;
        block_key_ = BlockKey::kOther;
        block_text_ = BlockText::kMissing;
      }
    }
    frames_.push_back(child);
    return true;
  }

  bool close() {
    Frame closing = frames_.back();
    frames_.pop_back();
    if (closing == Frame::kBlock) {
      if (block_type_ == "thinking" || block_type_ == "redacted_thinking") {
        e_.content_has_thinking = true;
      } else if (block_type_ != "text") {
        e_.content_has_other = true;
      } else if (block_text_ == BlockText::kNonBlank) {
        e_.content_has_other = true;
      } else if (e_.content_blank_texts < UINT8_MAX) {
        ++e_.content_blank_texts;
      }
    }
    if (closing == Frame::kBlock && block_type_ == "toolCall") {
      ToolCallRef ref;
      ref.id = arena_.add(block_id_);
      ref.name = arena_.add(block_name_);
      ref.column = block_id_column_;
      ref.id_kind = block_id_kind_;
      calls_.push_back(ref);
      ++e_.tool_calls_count;
    }
    return true;
  }

  const char* begin_;
  const char* end_;
  const KnownStrings* known_ = nullptr;
  std::size_t known_min_length_ = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>>* long_strings_ = nullptr;
  std::uint64_t line_offset_ = 0;
  Entry& e_;
  StringArena& arena_;
  std::vector<ToolCallRef>& calls_;
  std::deque<EntryDetails>& details_;
  EntryDetails* own_details_ = nullptr;
  std::size_t max_depth_;
  bool depth_exceeded_ = false;
  bool keep_timestamps_ = true;
  std::vector<Frame> frames_;
  std::uint32_t value_column_ = 1;
  const std::vector<std::pair<std::size_t, std::string>>& patched_;
  RootKey root_key_ = RootKey::kOther;
  MessageKey message_key_ = MessageKey::kOther;
  BlockKey block_key_ = BlockKey::kOther;
  bool usage_is_cost_ = false;
  bool strings_decoded_ = false;
  bool unread_is_blank_ = false;  // the last string ignored_string saw, where reads_blankness
  enum class BlockText : std::uint8_t { kMissing, kBlank, kNonBlank };  // a block's text (non-strings count as blank)
  BlockText block_text_ = BlockText::kMissing;
  std::string block_type_, block_id_, block_name_;
  JsonKind block_id_kind_ = JsonKind::kMissing;
  std::uint32_t block_id_column_ = 0;
};

bool is_ascii_space(unsigned char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Length of a Unicode whitespace sequence (as JS trim() sees it) at p, or 0.
std::size_t unicode_space_len(const unsigned char* p, std::size_t left) {
  if (left >= 2 && p[0] == 0xC2 && p[1] == 0xA0) return 2;                  // U+00A0
  if (left >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF) return 3;  // U+FEFF
  if (left >= 3 && p[0] == 0xE1 && p[1] == 0x9A && p[2] == 0x80) return 3;  // U+1680
  if (left >= 3 && p[0] == 0xE2 && p[1] == 0x80 &&
      ((p[2] >= 0x80 && p[2] <= 0x8A) || p[2] == 0xA8 || p[2] == 0xA9 || p[2] == 0xAF))
    return 3;                                                               // U+2000-200A, 2028, 2029, 202F
  if (left >= 3 && p[0] == 0xE2 && p[1] == 0x81 && p[2] == 0x9F) return 3;  // U+205F
  if (left >= 3 && p[0] == 0xE3 && p[1] == 0x80 && p[2] == 0x80) return 3;  // U+3000
  return 0;
}

}  // namespace

bool is_js_blank(std::string_view bytes) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t i = 0, n = bytes.size();
  while (i < n) {
    if (is_ascii_space(p[i])) {
      ++i;
      continue;
    }
    std::size_t len = unicode_space_len(p + i, n - i);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

ScanStatus EntryScanner::scan(char* data, std::size_t size, std::size_t start, Entry& entry, BadLine& bad,
                              std::uint64_t line_offset) {
  line_long_strings_.clear();
  std::string_view bytes(data, size);
  // Fast path for the common case: a line that starts with '{' is not blank.
  if (bytes.size() <= start || (bytes[start] != '{' && is_js_blank(bytes.substr(start)))) {
    utf8_verdict_ = find_invalid_utf8(bytes);
    return ScanStatus::kBlank;
  }

  // In-situ SAX: strings are unescaped in place instead of copied into
  // RapidJSON's stack, which was most of the time on lines full of tool
  // output and base64 images.
  // Parse a copy in place: if a number is too big for a double (JSON.parse
  // takes it as Infinity, RapidJSON refuses it), the line is patched and
  // parsed again from the pristine bytes.
  // Plain lines (nearly all) are read without a copy by FastSaxReader, which
  // gives the handler the same events; it skips ignored content and decodes
  // only the strings kept. When it is not sure, RapidJSON reads the line.
  if (fast_path_) {
    entry = Entry();
    entry.tool_calls_begin = static_cast<std::uint32_t>(tool_calls_.size());
    const std::size_t details_before = details_.size();
    static const std::vector<std::pair<std::size_t, std::string>> kNothingPatched;
    Handler handler(data, data + size, entry, arena_, tool_calls_, details_, max_depth_, kNothingPatched);
    handler.know_string_ends(known_strings_, line_offset);
    handler.keep_timestamps(keep_timestamps_);
    if (record_long_strings_) handler.record_long_strings(&line_long_strings_);
    FastSaxReader<Handler> fast;
    // A line the fast path reads has no NUL byte (a control byte in a string
    // or a byte outside the grammar fails it) and has had its UTF-8 checked.
    if (fast.parse(data + start, data + size, handler, max_depth_)) {
      const char* bad_utf8 = fast.first_invalid_utf8();
      utf8_verdict_ = bad_utf8 == nullptr ? kUtf8Valid : static_cast<std::size_t>(bad_utf8 - data);
      if (bad_utf8 != nullptr) line_long_strings_.clear();
      return ScanStatus::kParsed;
    }
    line_long_strings_.clear();
    tool_calls_.resize(entry.tool_calls_begin);
    details_.resize(details_before);
  }
  // Checked before RapidJSON, which may change the line in place.
  utf8_verdict_ = find_invalid_utf8(bytes);
  if (const void* nul = std::memchr(bytes.data(), '\0', bytes.size())) {
    bad.problem = LineProblem::kNulByte;
    bad.column = static_cast<std::uint64_t>(static_cast<const char*>(nul) - bytes.data()) + 1;
    bad.reason = "NUL byte";
    return ScanStatus::kBad;
  }
  std::vector<std::pair<std::size_t, std::string>> patched;
  rapidjson::ParseResult result;
  bool too_deep = false;
  // Lines over 64 KiB (images, long tool output) are parsed in place without
  // the copy: copying them was a fifth of validate's time, and a number too
  // big for a double inside one is then reported as a malformed line.
  const bool copy = size <= (std::size_t{64} << 10);
  // Lone surrogate escapes (see neutralize_lone_surrogates): a copied line is
  // fixed only when the parser trips on one; a big line is fixed up front
  // (big lines are mostly base64, where the scan finds no backslash at all).
  if (!copy) neutralize_lone_surrogates(data + start, size - start);
  for (int attempt = 0;; ++attempt) {
    char* text = data;
    if (copy) {
      scratch_.reserve(size + 1 + kLinePadding);  // capacity: addressable, see kLinePadding
      scratch_.assign(data, data + size + 1);     // with the '\0'
      text = scratch_.data();
    }
    entry = Entry();
    entry.tool_calls_begin = static_cast<std::uint32_t>(tool_calls_.size());
    entry.tool_calls_count = 0;
    const std::size_t details_before = details_.size();
    rapidjson::InsituStringStream stream(text + start);
    Handler handler(text, text + size, entry, arena_, tool_calls_, details_, max_depth_, patched);
    handler.strings_arrive_decoded();
    handler.keep_timestamps(keep_timestamps_);
    rapidjson::Reader reader;
    result = reader.Parse<rapidjson::kParseInsituFlag | rapidjson::kParseNumbersAsStringsFlag>(stream, handler);
    too_deep = handler.depth_exceeded();
    if (result) return ScanStatus::kParsed;
    tool_calls_.resize(entry.tool_calls_begin);
    details_.resize(details_before);
    entry.details_ = nullptr;
    if (!copy || attempt >= 64) break;
    if (result.Code() == rapidjson::kParseErrorStringUnicodeSurrogateInvalid) {
      neutralize_lone_surrogates(data + start, size - start);
      continue;
    }
    if (result.Code() != rapidjson::kParseErrorNumberTooBig) break;
    std::size_t at = start + result.Offset(), end = at;
    while (end < size && std::strchr("+-.0123456789eE", data[end]) && data[end] != '\0') ++end;
    if (end - at < 3) break;
    patched.emplace_back(at, std::string(data + at, end - at));
    data[at] = '0';
    data[at + 1] = 'e';
    std::memset(data + at + 2, '0', end - at - 2);
  }
  for (const auto& [at, text] : patched) std::memcpy(data + at, text.data(), text.size());  // undo
  std::size_t offset = start + result.Offset();
  bad.column = offset + 1;
  if (too_deep) {
    bad.problem = LineProblem::kTooDeep;
    bad.reason = "nesting deeper than " + std::to_string(max_depth_);
  } else if (result.Code() == rapidjson::kParseErrorDocumentRootNotSingular) {
    // A complete value followed by more: two records written onto one line.
    std::size_t next = offset;
    while (next < bytes.size() && is_ascii_space(static_cast<unsigned char>(bytes[next]))) ++next;
    bad.column = next + 1;
    bad.problem = (next < bytes.size() && (bytes[next] == '{' || bytes[next] == '[')) ? LineProblem::kGlued
                                                                                      : LineProblem::kMalformed;
    bad.reason =
        bad.problem == LineProblem::kGlued ? "a second JSON value starts here" : "unexpected text after the JSON value";
  } else {
    bad.problem = LineProblem::kMalformed;
    std::string reason = rapidjson::GetParseError_En(result.Code());
    if (!reason.empty() && reason.back() == '.') reason.pop_back();
    bad.reason = reason;
  }
  return ScanStatus::kBad;
}

}  // namespace pihydrate
