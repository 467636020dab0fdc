// The reference reader of thread exports: docs/thread-export.md's Reading
// rules, read plainly, on one thread, through RapidJSON. Tests hold the
// converter's fast reader to it (thread_reading.h); it is not used to convert.
#include <rapidjson/error/en.h>
#include <rapidjson/reader.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/thread_reference_reader.h"
#include "core/json_spans.h"
#include "readers/thread_rules.h"

namespace pihydrate {
namespace {

using thread_rules::ChatRole;
using thread_rules::Kind;

// A JSON value with where its bytes are: what the messages quote and point at.
struct Value {
  enum Type { kNull, kBool, kNumber, kString, kArray, kObject } type = kNull;
  std::size_t begin = 0, end = 0;  // its bytes
  std::string text;                // a string's decoded text
  std::vector<std::pair<std::string, std::unique_ptr<Value>>> members;
  std::vector<std::unique_ptr<Value>> elements;
  // The last member named `key`, as JSON.parse keeps it; null when none.
  const Value* member(const std::string& key) const {
    for (auto it = members.rbegin(); it != members.rend(); ++it)
      if (it->first == key) return it->second.get();
    return nullptr;
  }
};

// A NUL-terminated text for RapidJSON. Not rapidjson::StringStream: with
// RAPIDJSON_SSE2, RapidJSON 1.1 scans a StringStream's strings with SIMD and
// lets a raw control character through, which JSON.parse refuses.
class PlainStream {
 public:
  using Ch = char;
  explicit PlainStream(const char* text) : begin_(text), at_(text) {}
  Ch Peek() const { return *at_; }
  Ch Take() { return *at_++; }
  std::size_t Tell() const { return static_cast<std::size_t>(at_ - begin_); }
  Ch* PutBegin() { return nullptr; }  // never written: the reader is not in situ
  void Put(Ch) {}
  void Flush() {}
  std::size_t PutEnd(Ch*) { return 0; }

 private:
  const char* begin_;
  const char* at_;
};

// Builds Values from RapidJSON's events. The stream stands past a string,
// a number or a key when it tells of them, and at a bracket (not past it)
// when it tells of an object or array. A scalar starts at the first byte
// after the previous token that is not white space, ',' or ':'.
class Builder : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Builder> {
 public:
  Builder(std::string_view bytes, std::size_t base, std::size_t max_depth, const PlainStream& stream)
      : bytes_(bytes), base_(base), max_depth_(max_depth), stream_(stream), last_end_(base) {}
  std::unique_ptr<Value> root;
  bool too_deep = false;

  bool Null() { return scalar(Value::kNull); }
  bool Bool(bool) { return scalar(Value::kBool); }
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return scalar(Value::kNumber); }
  bool String(const char* s, rapidjson::SizeType n, bool) {
    scalar(Value::kString)->text.assign(s, n);
    return true;
  }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    key_.assign(s, n);
    last_end_ = here();
    return true;
  }
  bool StartObject() { return open(Value::kObject); }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool StartArray() { return open(Value::kArray); }
  bool EndArray(rapidjson::SizeType) { return close(); }

 private:
  std::size_t here() const { return base_ + stream_.Tell(); }
  Value* add(Value::Type type, std::size_t begin) {
    auto value = std::make_unique<Value>();
    value->type = type;
    value->begin = begin;
    Value* v = value.get();
    if (open_.empty())
      root = std::move(value);
    else if (open_.back()->type == Value::kObject)
      open_.back()->members.emplace_back(key_, std::move(value));
    else
      open_.back()->elements.push_back(std::move(value));
    return v;
  }
  Value* scalar(Value::Type type) {
    std::size_t begin = last_end_;
    while (std::string_view(" \t\r\n,:").find(bytes_[begin]) != std::string_view::npos) ++begin;
    Value* v = add(type, begin);
    v->end = last_end_ = here();
    return v;
  }
  bool open(Value::Type type) {
    open_.push_back(add(type, here()));
    last_end_ = here() + 1;
    if (open_.size() > max_depth_) too_deep = true;
    return !too_deep;
  }
  bool close() {
    open_.back()->end = last_end_ = here() + 1;
    open_.pop_back();
    return true;
  }

  std::string_view bytes_;
  std::size_t base_, max_depth_;
  const PlainStream& stream_;
  std::vector<Value*> open_;
  std::string key_;
  std::size_t last_end_;
};

// One JSON value from bytes[begin, end): null when it is not exactly one.
std::unique_ptr<Value> parse_value(std::string_view bytes, std::size_t begin, std::size_t end, std::size_t max_depth,
                                   ReadThread& out) {
  const std::string text(bytes.substr(begin, end - begin));  // NUL-terminated for RapidJSON
  // A NUL byte is never JSON (outside a string as inside one), and RapidJSON would end the text there.
  if (text.find('\0') != std::string::npos) return nullptr;
  PlainStream stream(text.c_str());
  Builder builder(bytes, begin, max_depth, stream);
  rapidjson::Reader reader;
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseNumbersAsStringsFlag;
  const rapidjson::ParseResult result = reader.Parse<kFlags>(stream, builder);
  out.number_too_big = out.number_too_big || result.Code() == rapidjson::kParseErrorNumberTooBig;
  if (result.IsError() || builder.too_deep) return nullptr;
  return std::move(builder.root);
}

class ReferenceReader {
 public:
  ReferenceReader(std::string_view bytes, const std::string& file, ReadThread& out)
      : bytes_(bytes), file_(file), out_(out) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < bytes.size(); ++i)
      if (bytes[i] == '\n') line_starts_.push_back(i + 1);
  }

  // `entries`: the JSONL variant's entry lines; null for one document, whose root holds them.
  void read(const Value& root, const std::vector<const Value*>* jsonl_entries) {
    out_.json_valid = true;
    if (!header_is_valid(root)) return;
    std::vector<const Value*> entries;
    if (jsonl_entries) {
      entries = *jsonl_entries;
    } else {
      const Value* array = root.member("entries");
      if (!array || array->type != Value::kArray) {
        report(Severity::kError, "entries", array ? array->begin : root.begin, array ? "expected an array" : "missing");
        return;
      }
      for (const auto& e : array->elements) entries.push_back(e.get());
    }
    out_.entry_count = entries.size();
    std::unordered_map<std::string, std::size_t> first_use;    // id -> entry index
    std::vector<std::pair<std::int64_t, ReadEntry>> accepted;  // with its order key
    bool any_seq = false;
    std::int64_t last_order_key = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      Entry entry = check_entry(*entries[i], i);
      append(entry.before_id);
      if (!entry.has_id) continue;
      auto [first, is_new] = first_use.emplace(entry.read.id, i);
      if (!is_new) {
        report(Severity::kError, entry.path + ".id", entry.id_at,
               "duplicate id " + quote_for_message(entry.read.id) + " (first used by entries[" +
                   std::to_string(first->second) + "])");
        continue;
      }
      append(entry.after_id);
      if (entry.repair) out_.repairs[entry.repair]++;
      any_seq = any_seq || entry.has_seq;
      if (!entry.accepted) continue;
      const std::int64_t order_key = entry.has_seq ? entry.seq : last_order_key;
      last_order_key = order_key;
      accepted.emplace_back(order_key, std::move(entry.read));
    }
    for (const Diagnostic& d : out_.diagnostics)
      if (d.severity == Severity::kError) return;
    if (any_seq)
      std::stable_sort(accepted.begin(), accepted.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [key, entry] : accepted) out_.entries.push_back(std::move(entry));
  }

 private:
  struct Entry {
    ReadEntry read;
    std::string path;
    Diagnostics before_id, after_id;
    bool has_id = false, has_seq = false, accepted = false;
    std::int64_t seq = 0;
    std::size_t id_at = 0;
    const char* repair = nullptr;
  };

  Diagnostic diagnostic(Severity severity, const std::string& path, std::size_t offset,
                        const std::string& message) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset) - 1;
    return thread_export_diagnostic(severity, file_, static_cast<std::uint64_t>(it - line_starts_.begin()) + 1,
                                    offset - *it + 1, path, message);
  }
  void report(Severity severity, const std::string& path, std::size_t offset, const std::string& message) {
    out_.diagnostics.push_back(diagnostic(severity, path, offset, message));
  }
  void append(const Diagnostics& ds) { out_.diagnostics.insert(out_.diagnostics.end(), ds.begin(), ds.end()); }
  std::string_view raw(const Value& v) const { return bytes_.substr(v.begin, v.end - v.begin); }

  // format "thread-export", version 1, and a thread object with a non-empty id.
  bool header_is_valid(const Value& root) {
    auto require = [&](const char* name, Value::Type type, const std::string& wanted) {
      const Value* v = root.member(name);
      if (v && v->type == type && (type == Value::kString ? v->text : std::string(raw(*v))) == wanted) return true;
      const std::string shown = type == Value::kString ? json_quote(wanted) : wanted;
      report(Severity::kError, name, v ? v->begin : root.begin,
             v ? "expected " + shown + ", found " + std::string(raw(*v).substr(0, 40))
               : "missing (expected " + shown + ")");
      return false;
    };
    if (!require("format", Value::kString, "thread-export") || !require("version", Value::kNumber, "1")) return false;
    const Value* thread = root.member("thread");
    if (!thread || thread->type != Value::kObject) {
      report(Severity::kError, "thread", thread ? thread->begin : root.begin,
             thread ? "expected an object" : "missing");
      return false;
    }
    const Value* id = thread->member("id");
    if (!id || id->type != Value::kString || id->text.empty()) {
      report(Severity::kError, "thread.id", id ? id->begin : thread->begin,
             id ? "expected a non-empty string" : "missing");
      return false;
    }
    return true;
  }

  std::string stream_key_of(const Value* v) const {
    std::int64_t integer = 0;
    if (v && v->type == Value::kString) return thread_rules::stream_key_of_string(v->text);
    if (v && v->type == Value::kNumber && parse_integer(v, integer))
      return thread_rules::stream_key_of_integer(integer);
    return "";
  }
  // An integer that fits in 64 bits, as written.
  bool parse_integer(const Value* v, std::int64_t& out) const {
    const std::string_view text = raw(*v);
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
    return error == std::errc() && end == text.data() + text.size() && !text.empty();
  }

  // docs/thread-export.md, Reading: what makes an entry accepted, skipped or an error.
  Entry check_entry(const Value& e, std::size_t index) {
    Entry entry;
    entry.path = "entries[" + std::to_string(index) + "]";
    entry.read.index = index;
    const std::string& path = entry.path;
    auto fail = [&](Diagnostics& to, Severity severity, const std::string& where, std::size_t offset,
                    const std::string& message) { to.push_back(diagnostic(severity, where, offset, message)); };
    auto reject = [&](const std::string& where, std::size_t offset, const std::string& message) {
      fail(entry.after_id, Severity::kError, where, offset, message);
    };
    if (e.type != Value::kObject) {
      fail(entry.before_id, Severity::kError, path, e.begin, "expected an object");
      return entry;
    }
    const Value* id = e.member("id");
    if (!id || id->type != Value::kString || id->text.empty()) {
      fail(entry.before_id, Severity::kError, path + ".id", id ? id->begin : e.begin,
           id ? "expected a non-empty string" : "missing");
      return entry;
    }
    entry.has_id = true;
    entry.read.id = id->text;
    entry.id_at = id->begin;
    const Value* kind = e.member("kind");
    if (!kind || kind->type != Value::kString) {
      reject(path + ".kind", kind ? kind->begin : e.begin, kind ? "expected a string" : "missing");
      return entry;
    }
    entry.read.kind = thread_rules::kind_of(kind->text);
    if (const Value* seq = e.member("seq")) {
      if (seq->type != Value::kNumber || !parse_integer(seq, entry.seq)) {
        reject(path + ".seq", seq->begin, "expected an integer of at most 64 bits");
        return entry;
      }
      entry.has_seq = true;
    }
    const Value* data = e.member("data");
    const Value* payload = data ? data : e.member("payload");
    const std::string payload_path = path + (data || !payload ? ".data" : ".payload");
    switch (entry.read.kind) {
      case Kind::kPiAssistant:
      case Kind::kPiToolResult:
      case Kind::kPiUser: {
        if (!payload || payload->type != Value::kObject) {
          reject(payload_path, payload ? payload->begin : e.begin, payload ? "expected an object" : "missing");
          return entry;
        }
        const Value* message = payload->member("role") ? payload : payload->member("message");
        if (!message || message->type != Value::kObject) {
          reject(payload_path + ".message", message ? message->begin : payload->begin,
                 message ? "expected an object" : "missing");
          return entry;
        }
        const std::string want = entry.read.kind == Kind::kPiAssistant    ? "assistant"
                                 : entry.read.kind == Kind::kPiToolResult ? "toolResult"
                                                                          : "user";
        const Value* role = message->member("role");
        const std::string role_text = role && role->type == Value::kString ? role->text : "";
        if (role_text != want) {
          reject(payload_path + ".message.role", role ? role->begin : message->begin,
                 "expected \"" + want + "\" for a " + thread_rules::kind_name(entry.read.kind) + " entry, found " +
                     (role_text.empty() ? std::string("none") : quote_for_message(role_text)));
          return entry;
        }
        if (entry.read.kind == Kind::kPiUser) entry.read.ref = string_or_empty(payload->member("chatRef"));
        if (entry.read.kind == Kind::kPiAssistant)
          entry.read.final_timestamp = stream_key_of(message->member("timestamp"));
        break;
      }
      case Kind::kChat: {
        const Value* role = e.member("role");
        const std::string role_text = role && role->type == Value::kString ? role->text : "";
        if (role_text != "user" && role_text != "assistant" && role_text != "system") {
          reject(path + ".role", e.begin, "expected \"user\", \"assistant\" or \"system\"");
          return entry;
        }
        const Value* text = e.member("text");
        if (!text || text->type != Value::kString) {
          reject(path + ".text", e.begin, "missing (a chat entry needs its text)");
          return entry;
        }
        entry.read.role = role_text == "user"        ? ChatRole::kUser
                          : role_text == "assistant" ? ChatRole::kAssistant
                                                     : ChatRole::kOther;
        if (entry.read.role == ChatRole::kAssistant) entry.read.ref = string_or_empty(e.member("piRef"));
        break;
      }
      case Kind::kPiChunk: {
        const Value* event = payload && payload->type == Value::kObject ? payload->member("event") : nullptr;
        if (!event || event->type != Value::kObject) {
          fail(entry.after_id, Severity::kWarning, path, e.begin, "pi.chunk without data.event; skipped");
          entry.repair = "skipped-chunk-without-event";
          return entry;
        }
        entry.read.stream_key = stream_key_of(payload->member("streamKey"));
        entry.read.has_stream_key = !entry.read.stream_key.empty();
        break;
      }
      case Kind::kPiCompaction:
        if (!payload || payload->type != Value::kObject) {
          reject(payload_path, payload ? payload->begin : e.begin, payload ? "expected an object" : "missing");
          return entry;
        }
        break;
      case Kind::kPiEntry:
      case Kind::kPiSnapshot: {
        // Raw pi entries carry their session lines: data.line or data.entry, data.jsonl.
        const bool object = payload && payload->type == Value::kObject;
        const Value* line = object ? payload->member("line") : nullptr;
        const Value* as_object = object ? payload->member("entry") : nullptr;
        const Value* jsonl = object ? payload->member("jsonl") : nullptr;
        if (entry.read.kind == Kind::kPiEntry && !(line && line->type == Value::kString) &&
            !(as_object && as_object->type == Value::kObject)) {
          reject(path + ".data", e.begin, "a pi.entry carries data.line (a string) or data.entry (an object)");
          return entry;
        }
        if (entry.read.kind == Kind::kPiSnapshot && !(jsonl && jsonl->type == Value::kString)) {
          reject(path + ".data.jsonl", e.begin, "missing: a pi.snapshot carries the session file as a string");
          return entry;
        }
        break;
      }
      default:
        fail(entry.after_id, Severity::kWarning, path + ".kind", kind->begin,
             "unknown kind " + quote_for_message(kind->text) + "; the entry is skipped");
        entry.repair = "skipped-unknown-kind";
        return entry;
    }
    entry.accepted = true;
    return entry;
  }
  static std::string string_or_empty(const Value* v) { return v && v->type == Value::kString ? v->text : ""; }

  std::string_view bytes_;
  const std::string& file_;
  ReadThread& out_;
  std::vector<std::size_t> line_starts_;
};

}  // namespace

ReadThread read_thread_reference(std::string bytes, const std::string& file, std::size_t max_depth) {
  ReadThread out;
  // JSON.parse takes an escaped lone surrogate; RapidJSON does not (docs/thread-export.md, Reading).
  neutralize_lone_surrogates(bytes.data(), bytes.size(), [](std::size_t) {}, {});
  const std::string_view view(bytes);
  std::size_t start = bytes.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  while (start < view.size() && std::string_view(" \t\r\n").find(view[start]) != std::string_view::npos) ++start;
  ReferenceReader reader(view, file, out);
  // One document...
  if (std::unique_ptr<Value> root = parse_value(view, start, view.size(), max_depth, out)) {
    reader.read(*root, nullptr);
    return out;
  }
  // ...or the JSONL variant: a header line, then an entry per line.
  const std::size_t first_end = view.find('\n', start);
  if (first_end == std::string_view::npos) return out;
  std::unique_ptr<Value> header = parse_value(view, start, first_end, max_depth, out);
  if (!header || header->type != Value::kObject || header->member("entries")) return out;
  std::vector<std::unique_ptr<Value>> lines;
  for (std::size_t pos = first_end + 1; pos < view.size();) {
    std::size_t eol = view.find('\n', pos);
    if (eol == std::string_view::npos) eol = view.size();
    const std::string_view line = view.substr(pos, eol - pos);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
      std::unique_ptr<Value> entry = parse_value(view, pos, eol, max_depth, out);
      if (!entry) return out;
      lines.push_back(std::move(entry));
    }
    pos = eol + 1;
  }
  std::vector<const Value*> entries;
  for (const auto& e : lines) entries.push_back(e.get());
  reader.read(*header, &entries);
  return out;
}

}  // namespace pihydrate
