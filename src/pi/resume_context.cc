// The request pi builds when a session resumes, message by message: pi's
// buildSessionContext (via the pi view), then convertToLlm
// (pi-coding-agent's core/messages.js) and pi-ai's transformMessages, each
// replayed on the lines of the path as JavaScript reads them.
#include "pihydrate/context.h"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "core/json_value.h"
#include "core/utf8.h"

namespace pihydrate {

const char* sent_source_name(SentSource source) {
  switch (source) {
    case SentSource::kMessage: return "message";
    case SentSource::kCustomMessage: return "custom_message";
    case SentSource::kBranchSummary: return "branch_summary";
    case SentSource::kCompactionSummary: return "compaction_summary";
    case SentSource::kCompactionSystemMessage: return "compaction_system_message";
    case SentSource::kBashExecution: return "bash_execution";
    case SentSource::kSynthesized: return "synthesized";
  }
  return "message";
}

const char* drop_reason_name(DropReason reason) {
  switch (reason) {
    case DropReason::kBeforeFirstKept: return "before-first-kept";
    case DropReason::kEmptyBranchSummary: return "empty-branch-summary";
    case DropReason::kBashExcluded: return "bash-excluded";
    case DropReason::kUnknownRole: return "unknown-role";
    case DropReason::kSystemRole: return "system-role";
    case DropReason::kSystemBeforeCompaction: return "system-before-compaction";
    case DropReason::kContextEditRemoved: return "context-edit-removed";
    case DropReason::kErrorAssistant: return "error-assistant";
    case DropReason::kAbortedAssistant: return "aborted-assistant";
  }
  return "unknown-role";
}

namespace {

using Value = rapidjson::Value;

// The pi texts convertToLlm wraps summaries in (core/messages.js).
constexpr const char* kCompactionPrefix =
    "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
constexpr const char* kCompactionSuffix = "\n</summary>";
constexpr const char* kBranchPrefix =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
constexpr const char* kBranchSuffix = "</summary>";
constexpr const char* kNoResult = "No result provided";

// The line as node's UTF-8 decoder gives it to JSON.parse: each maximal
// invalid subpart becomes U+FFFD.
std::string decoded_as_node(std::string line) {
  if (find_invalid_utf8(line) == kUtf8Valid) return line;
  std::string out;
  const auto* p = reinterpret_cast<const unsigned char*>(line.data());
  const std::size_t n = line.size();
  for (std::size_t i = 0; i < n;) {
    if (p[i] < 0x80) {
      out += static_cast<char>(p[i++]);
      continue;
    }
    if (std::size_t len = utf8_sequence_length(p + i, n - i)) {
      out.append(line, i, len);
      i += len;
      continue;
    }
    // How far a valid sequence's prefix runs: all of it becomes one U+FFFD.
    const unsigned char c = p[i];
    std::size_t need = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
      need = 1;
    else if (c == 0xE0)
      need = 2, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEF)
      need = 2, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c == 0xF0)
      need = 3, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3)
      need = 3;
    else if (c == 0xF4)
      need = 3, hi = 0x8F;
    std::size_t j = i + 1;
    if (need && j < n && p[j] >= lo && p[j] <= hi) {
      ++j;
      while (j < n && j < i + 1 + need && (p[j] & 0xC0) == 0x80) ++j;
    }
    out += "\xEF\xBF\xBD";
    i = j;
  }
  return out;
}

bool is_nullish(const Value* v) { return !v || v->IsNull(); }

bool truthy(const Value* v) {
  if (!v || v->IsNull() || v->IsFalse()) return false;
  if (v->IsString()) return v->GetStringLength() > 0;
  if (v->IsNumber()) return v->GetDouble() != 0.0 && !std::isnan(v->GetDouble());
  return true;
}

bool is_string(const Value* v, const char* text) {
  return v && v->IsString() && std::string_view(v->GetString(), v->GetStringLength()) == text;
}

std::string json_text(const Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  v.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// Number to string the way JavaScript prints it (shortest round trip).
std::string js_number(double d) {
  if (std::isnan(d)) return "NaN";
  if (d == 0) return "0";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  char buf[40];
  int precision = 1;
  for (; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  // buf is d.ddde[+-]XX: digits and a decimal exponent.
  std::string s(buf);
  const bool negative = s[0] == '-';
  if (negative) s.erase(0, 1);
  const std::size_t e = s.find('e');
  const int exponent = std::atoi(s.c_str() + e + 1);
  std::string digits = s.substr(0, e);
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int k = static_cast<int>(digits.size()), n = exponent + 1;
  std::string out;
  if (k <= n && n <= 21) {
    out = digits + std::string(static_cast<std::size_t>(n - k), '0');
  } else if (0 < n && n <= 21) {
    out = digits.substr(0, static_cast<std::size_t>(n)) + "." + digits.substr(static_cast<std::size_t>(n));
  } else if (-6 < n && n <= 0) {
    out = "0." + std::string(static_cast<std::size_t>(-n), '0') + digits;
  } else {
    out = digits.substr(0, 1);
    if (k > 1) out += "." + digits.substr(1);
    out += (n - 1 >= 0 ? "e+" : "e-") + std::to_string(std::abs(n - 1));
  }
  return negative ? "-" + out : out;
}

// String(v), as a template literal or `+` shows a value.
std::string js_string(const Value* v) {
  if (!v) return "undefined";
  if (v->IsString()) return std::string(v->GetString(), v->GetStringLength());
  if (v->IsNull()) return "null";
  if (v->IsBool()) return v->IsTrue() ? "true" : "false";
  if (v->IsNumber()) return js_number(v->GetDouble());
  if (v->IsArray()) {
    std::string out;
    for (rapidjson::SizeType i = 0; i < v->Size(); ++i) {
      if (i) out += ',';
      if (!(*v)[i].IsNull()) out += js_string(&(*v)[i]);
    }
    return out;
  }
  return "[object Object]";
}

// `text.trim() === ""`.
bool is_js_blank(std::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    char32_t cp = p[i];
    std::size_t len = 1;
    if (cp >= 0x80) {
      len = utf8_sequence_length(p + i, text.size() - i);
      if (!len) return false;
      cp = len == 2 ? (cp & 0x1F) : len == 3 ? (cp & 0x0F) : (cp & 0x07);
      for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    if (!is_js_space(cp)) return false;
    i += len;
  }
  return true;
}

// A value as SentValue: a string's text, or the JSON text of the rest.
SentValue sent_value(const Value* v) {
  SentValue out;
  if (!v) return out;
  if (v->IsString()) {
    out.kind = JsonKind::kString;
    out.text.assign(v->GetString(), v->GetStringLength());
    return out;
  }
  out.kind = v->IsNull()     ? JsonKind::kNull
             : v->IsFalse()  ? JsonKind::kFalse
             : v->IsTrue()   ? JsonKind::kTrue
             : v->IsNumber() ? JsonKind::kNumber
             : v->IsArray()  ? JsonKind::kArray
                             : JsonKind::kObject;
  out.text = v->IsNumber() ? js_number(v->GetDouble()) : json_text(*v);
  return out;
}

// JavaScript's === on two JSON values: objects and arrays are never the same one.
bool js_same(const SentValue& a, const SentValue& b) {
  return a == b && a.kind != JsonKind::kArray && a.kind != JsonKind::kObject;
}

// A message between convertToLlm and the request.
struct LlmMessage {
  std::string role;
  SentSource source = SentSource::kMessage;
  std::int64_t node = -1;
  const Value* message = nullptr;  // the message object (assistant fields, toolCallId, isError)
  const Value* content = nullptr;  // nullptr: undefined
  bool wrapped = false;            // content is the single text `wrapped_text`
  std::string wrapped_text;
  bool edited = false;
};

// Where the latest compaction and its kept range are on the path.
struct KeptRange {
  std::vector<std::uint32_t> path_pos;  // node -> its position on the path (0 when off it)
  bool has_compaction = false;
  std::size_t comp_pos = 0;     // the latest compaction's position; without one, the path's size
  std::uint64_t comp_line = 0;  // its line; 0 without one
  std::size_t kept_from = 0;    // the kept range: [kept_from, comp_pos)

  // A node's position on the path (0 for one not on it).
  std::size_t position(std::uint32_t node) const { return node < path_pos.size() ? path_pos[node] : 0; }
  // Whether buildSessionContext walks the path entry at `i`.
  bool walks(std::size_t i) const { return !has_compaction || i > comp_pos || (kept_from <= i && i < comp_pos); }
};

// pi 1.5's context_edit entries among the entries of the context; the last
// per target wins.
struct ContextEdits {
  std::unordered_map<std::string, std::int64_t> of_target;  // target key -> context_edit node

  static std::string key(const SentValue& v) { return std::to_string(static_cast<int>(v.kind)) + ":" + v.text; }
};

// convertToLlm: a summary becomes a user message in pi's words.
void wrap_summary(LlmMessage& m, SentSource source, const Value* summary) {
  m.role = "user";
  m.source = source;
  m.wrapped = true;
  m.wrapped_text = source == SentSource::kBranchSummary ? kBranchPrefix + js_string(summary) + kBranchSuffix
                                                        : kCompactionPrefix + js_string(summary) + kCompactionSuffix;
}

// convertToLlm's bashExecutionToText: the command, its output, how it ended.
std::string bash_execution_text(const Value* message) {
  std::string text = "Ran `" + js_string(json_member(message, "command")) + "`\n";
  const Value* output = json_member(message, "output");
  text += truthy(output) ? "```\n" + js_string(output) + "\n```" : "(no output)";
  const Value* exit_code = json_member(message, "exitCode");
  if (truthy(json_member(message, "cancelled"))) {
    text += "\n\n(command cancelled)";
  } else if (!is_nullish(exit_code) && !(exit_code->IsNumber() && exit_code->GetDouble() == 0)) {
    text += "\n\nCommand exited with code " + js_string(exit_code);
  }
  if (truthy(json_member(message, "truncated")) && truthy(json_member(message, "fullOutputPath")))
    text += "\n\n[Output truncated. Full output: " + js_string(json_member(message, "fullOutputPath")) + "]";
  return text;
}

// A text block's text as pi-ai's request holds it.
std::string block_text(const Value& block) {
  const Value* text = json_member(&block, "text");
  return !text ? std::string() : text->IsString() ? js_string(text) : sent_value(text).text;
}

// The texts of a content value as pi-ai's request holds them.
void read_content(const Value* content, SentMessage& out) {
  if (!content) return;
  if (content->IsString()) {
    out.texts.emplace_back(content->GetString(), content->GetStringLength());
    return;
  }
  if (!content->IsArray()) return;
  for (const Value& block : content->GetArray()) {
    const Value* type = json_member(&block, "type");
    if (is_string(type, "text")) {
      out.texts.push_back(block_text(block));
    } else if (is_string(type, "image")) {
      ++out.images;
    }
  }
}

// transformMessages' first pass over one thinking block: sent as thinking,
// sent as text (another model's, where this pi keeps it) or dropped. False
// when pi-ai throws (a thinking text that is not a string).
bool read_thinking(const Value& block, bool same_model, const PiProfile& pi, SentMessage& s) {
  const Value* thinking = json_member(&block, "thinking");
  const bool redacted = truthy(json_member(&block, "redacted"));
  const bool signed_block = truthy(json_member(&block, "thinkingSignature"));
  if (pi.drops_other_models_thinking) {
    if (!same_model) {
      ++s.thinking_dropped;
      return true;
    }
    if (redacted || signed_block) {
      ++s.thinking;
      return true;
    }
  } else {
    if (redacted) {
      ++(same_model ? s.thinking : s.thinking_dropped);
      return true;
    }
    if (same_model && signed_block) {
      ++s.thinking;
      return true;
    }
  }
  if (truthy(thinking) && !thinking->IsString()) return false;
  std::string_view text =
      truthy(thinking) ? std::string_view(thinking->GetString(), thinking->GetStringLength()) : std::string_view();
  if (is_js_blank(text)) {
    ++s.thinking_dropped;
  } else if (same_model) {
    ++s.thinking;
  } else {
    ++s.thinking_as_text;  // only where another model's thinking is not dropped above
    s.texts.emplace_back(text);
  }
  return true;
}

// transformMessages' second pass, as it goes: the calls waiting for their
// results, the ids answered since the last assistant, and (pi 1.5) the
// system messages held until the results are in.
struct SecondPass {
  struct Pending {
    SentValue id;
    std::uint64_t line;
  };
  std::vector<Pending> pending;
  std::vector<SentValue> answered;
  std::vector<SentMessage> held_system;
  const std::function<void(SentMessage&&)>& out;  // where each message of the request goes, in order

  explicit SecondPass(const std::function<void(SentMessage&&)>& sink) : out(sink) {}

  // Before the next assistant or user message, and at the end: a
  // "No result provided" for each call without a result, then the system
  // messages held.
  void close_pending() {
    for (const Pending& call : pending) {
      bool found = false;
      for (const SentValue& id : answered)
        found = found || js_same(id, call.id) || (id.kind == JsonKind::kMissing && call.id.kind == JsonKind::kMissing);
      if (found) continue;
      SentMessage s;
      s.role = "toolResult";
      s.source = SentSource::kSynthesized;
      s.texts.push_back(kNoResult);
      s.tool_call_id = call.id;
      s.is_error = true;
      s.call_line = call.line;
      out(std::move(s));
    }
    pending.clear();
    answered.clear();
    for (SentMessage& s : held_system) out(std::move(s));
    held_system.clear();
  }
  // A sent assistant: its calls wait for their results.
  void add_assistant(SentMessage s) {
    if (!s.tool_calls.empty()) {
      for (const SentToolCall& c : s.tool_calls) pending.push_back({c.id, s.line});
      answered.clear();
    }
    out(std::move(s));
  }
  // A result answers its id; an orphan when no waiting call has it.
  void add_result(SentMessage s) {
    bool called = false;
    for (const Pending& call : pending) called = called || js_same(call.id, s.tool_call_id);
    s.orphan = !called;
    answered.push_back(s.tool_call_id);
    out(std::move(s));
  }
  // A system message waits while calls do.
  void add_system(SentMessage s) {
    if (!pending.empty())
      held_system.push_back(std::move(s));
    else
      out(std::move(s));
  }
};

struct Builder {
  const SessionIndex& index;
  const PiView& view;
  const LineText& line_text;
  ResumeContext rc;
  const std::function<void(SentMessage&&)>& sink;  // each message of the request, in order
  // The nodes parsed for the item at hand, their values in one pool (a
  // Document of its own per node cost a 4 KiB page each). Released after
  // each item (release_docs), so memory does not grow with the path.
  rapidjson::MemoryPoolAllocator<> pool;
  std::vector<std::unique_ptr<Value>> docs;  // per node, parsed on demand into `pool`
  std::vector<std::uint32_t> parsed;         // the nodes `docs` holds
  std::vector<std::unique_ptr<Value>> made;  // values pi builds (`[]` for missing content, replacement texts)
  rapidjson::Document::AllocatorType* allocator = nullptr;
  rapidjson::Document scratch;
  const PiProfile& pi;  // what this version of pi does differently

  Builder(const SessionIndex& i, const PiView& v, const LineText& t, const std::function<void(SentMessage&&)>& s)
      : index(i), view(v), line_text(t), sink(s), docs(v.nodes.size()), pi(v.profile()) {
    allocator = &scratch.GetAllocator();
  }

  const Entry& entry(std::int64_t node) const { return view.entry(index, static_cast<std::uint32_t>(node)); }

  const Value& doc(std::int64_t node) {
    auto& d = docs[static_cast<std::size_t>(node)];
    if (!d) {
      rapidjson::Document line(&pool);
      const std::string text = decoded_as_node(line_text(entry(node)));
      line.Parse<rapidjson::kParseIterativeFlag>(text.c_str(), text.size());
      if (line.HasParseError()) line.SetNull();  // the view kept it, so it parsed; a changed file reads as nothing
      d = std::make_unique<Value>(std::move(static_cast<Value&>(line)));
      parsed.push_back(static_cast<std::uint32_t>(node));
    }
    return *d;
  }

  // Forgets every parsed node and built value: nothing may point into them.
  void release_docs() {
    for (std::uint32_t node : parsed) docs[node].reset();
    parsed.clear();
    pool.Clear();
    made.clear();
    scratch.GetAllocator().Clear();
  }

  const Value* empty_array() {
    made.push_back(std::make_unique<Value>(rapidjson::kArrayType));
    return made.back().get();
  }

  void drop(std::int64_t node, std::string what, DropReason reason, std::uint64_t by_line = 0) {
    DroppedEntry d;
    d.line = entry(node).line;
    d.entry_id = sent_value(json_member(&doc(node), "id"));
    d.what = std::move(what);
    d.reason = reason;
    d.by_line = by_line;
    rc.dropped.push_back(std::move(d));
  }

  std::string message_what(const Value* message) {
    const Value* role = json_member(message, "role");
    if (role && role->IsString()) return "message (" + std::string(role->GetString(), role->GetStringLength()) + ")";
    return "message";
  }

  // getSessionContextSettings over the path: the last model_change or
  // assistant message names the model. Then pi_load's api choice: the api
  // of the last sent assistant message of that model. Both found from the
  // end, parsing only the entries the index says may name one.
  void choose_model(const std::vector<std::int64_t>& sent_assistants) {
    SentValue p{JsonKind::kString, "unknown"}, m{JsonKind::kString, "unknown"};
    for (auto it = view.path.rbegin(); it != view.path.rend(); ++it) {
      const Entry& e = entry(*it);
      if (e.root != JsonKind::kObject ||
          !(e.type == EntryType::kModelChange || (e.type == EntryType::kMessage && e.role == Role::kAssistant)))
        continue;
      const Value& line = doc(*it);
      const Value* type = json_member(&line, "type");
      const Value* provider = nullptr;
      const Value* model_id = nullptr;
      if (is_string(type, "model_change")) {
        provider = json_member(&line, "provider");
        model_id = json_member(&line, "modelId");
      } else if (is_string(type, "message") &&
                 is_string(json_member(json_member(&line, "message"), "role"), "assistant")) {
        provider = json_member(json_member(&line, "message"), "provider");
        model_id = json_member(json_member(&line, "message"), "model");
      } else {
        release_docs();
        continue;
      }
      if (!is_nullish(provider)) p = sent_value(provider);
      if (!is_nullish(model_id)) m = sent_value(model_id);
      release_docs();
      break;
    }
    model_provider = p;
    model_id_value = m;
    model_api = SentValue{JsonKind::kString, "unknown"};
    for (auto it = sent_assistants.rbegin(); it != sent_assistants.rend(); ++it) {
      const Value* message = assistant_message(*it);
      const Value* api = json_member(message, "api");
      const bool found = js_same(sent_value(json_member(message, "provider")), p) &&
                         js_same(sent_value(json_member(message, "model")), m) && api && api->IsString();
      if (found) model_api = sent_value(api);
      release_docs();
      if (found) break;
    }
    rc.model.provider = p.text;
    rc.model.id = m.text;
    rc.model.api = model_api.text;
  }

  const Value* assistant_message(std::int64_t node) { return json_member(&doc(node), "message"); }

  SentValue model_provider, model_id_value, model_api;

  void build();
  void note_leaf();
  // buildSessionContext
  KeptRange find_kept_range();
  ContextEdits find_context_edits(const KeptRange& range);
  std::int64_t edit_for(const ContextEdits& edits, std::uint32_t node);
  void drop_outside_context(const KeptRange& range);
  std::vector<std::int64_t> find_sent_assistants(const ContextEdits& edits);
  void add_llm_messages(const ContextItem& item, const KeptRange& range, const ContextEdits& edits,
                        std::vector<LlmMessage>& llm);
  void add_compaction_messages(std::int64_t node, const Value& e, std::vector<LlmMessage>& llm);
  bool message_to_llm(std::int64_t node, const Value& e, std::size_t pos, const KeptRange& range, LlmMessage& m);
  void apply_context_edit(const Value* replacement, LlmMessage& m);
  // transformMessages
  bool convert(const LlmMessage& m, SecondPass& pass);
  SentMessage sent_message(const LlmMessage& m);
  std::string read_assistant_content(const LlmMessage& m, SentMessage& s);
  bool fail(std::int64_t node, std::string why);
};

void Builder::build() {
  rc.version = view.version;
  rc.loads = view.loads();
  if (!rc.loads) return;
  note_leaf();
  const KeptRange range = find_kept_range();
  const ContextEdits edits = pi.applies_context_edits ? find_context_edits(range) : ContextEdits{};
  drop_outside_context(range);

  choose_model(find_sent_assistants(edits));

  // Item by item: buildSessionContext's messages, convertToLlm, then
  // transformMessages, each message handed on as soon as it is known.
  SecondPass pass(sink);
  std::vector<LlmMessage> llm;
  for (const ContextItem& item : view.context) {
    llm.clear();
    add_llm_messages(item, range, edits, llm);
    for (const LlmMessage& m : llm)
      if (!convert(m, pass)) return;
    release_docs();
  }
  pass.close_pending();
  std::stable_sort(rc.dropped.begin(), rc.dropped.end(),
                   [](const DroppedEntry& a, const DroppedEntry& b) { return a.line < b.line; });
}

void Builder::note_leaf() {
  rc.leaf = view.path.empty() ? -1 : static_cast<std::int64_t>(view.path.back());
  if (rc.leaf < 0) return;
  const Entry& leaf = view.entry(index, view.path.back());
  rc.leaf_line = leaf.line;
  if (leaf.id.is_string()) rc.leaf_id = std::string(leaf.id.text());
}

KeptRange Builder::find_kept_range() {
  KeptRange r;
  r.path_pos.assign(view.nodes.size(), 0);
  for (std::size_t i = 0; i < view.path.size(); ++i) r.path_pos[view.path[i]] = static_cast<std::uint32_t>(i);
  r.has_compaction = view.compaction >= 0;
  r.comp_pos = r.has_compaction ? r.position(static_cast<std::uint32_t>(view.compaction)) : view.path.size();
  r.comp_line = r.has_compaction ? entry(view.compaction).line : 0;
  // The kept range: from the entry firstKeptEntryId names up to the compaction.
  r.kept_from = r.comp_pos;
  if (r.has_compaction && view.first_kept_found) {
    const JsMapKey kept_key = js_map_key(entry(view.compaction).details().first_kept_entry_id);
    for (std::size_t i = 0; i < r.comp_pos && r.kept_from == r.comp_pos; ++i) {
      const std::uint32_t node = view.path[i];
      if (view.migrates_v1 ? static_cast<std::int64_t>(node) == view.first_kept_index_target
                           : js_map_key(entry(node).id) == kept_key)
        r.kept_from = i;
    }
  }
  return r;
}

ContextEdits Builder::find_context_edits(const KeptRange& range) {
  ContextEdits edits;
  for (std::size_t i = 0; i < view.path.size(); ++i) {
    const std::uint32_t node = view.path[i];
    if (!range.walks(i) || entry(node).type != EntryType::kContextEdit) continue;  // the index knows most
    if (!is_string(json_member(&doc(node), "type"), "context_edit")) continue;
    const SentValue target = sent_value(json_member(&doc(node), "targetId"));
    release_docs();
    if (target.kind == JsonKind::kArray || target.kind == JsonKind::kObject) continue;
    edits.of_target[ContextEdits::key(target)] = node;
  }
  return edits;
}

// The assistant messages of the context that reach convertToLlm (a
// context_edit may remove one), for the model's api.
std::vector<std::int64_t> Builder::find_sent_assistants(const ContextEdits& edits) {
  std::vector<std::int64_t> sent;
  for (const ContextItem& item : view.context) {
    const Entry& e = entry(item.node);
    if (item.kind != ContextKind::kMessage || e.role != Role::kAssistant) continue;
    const std::int64_t edit = edit_for(edits, item.node);
    const Value* replacement = edit >= 0 ? json_member(&doc(edit), "replacement") : nullptr;
    const bool removed = edit >= 0 && replacement && replacement->IsNull();
    const bool assistant = is_string(json_member(json_member(&doc(item.node), "message"), "role"), "assistant");
    release_docs();
    if (!removed && assistant) sent.push_back(item.node);
  }
  return sent;
}

// The context_edit node that edits `node`, or -1.
std::int64_t Builder::edit_for(const ContextEdits& edits, std::uint32_t node) {
  if (edits.of_target.empty()) return -1;
  auto it = edits.of_target.find(ContextEdits::key(sent_value(json_member(&doc(node), "id"))));
  return it == edits.of_target.end() ? -1 : it->second;
}

// What buildSessionContext leaves out: entries before the kept range,
// and branch summaries without a summary.
void Builder::drop_outside_context(const KeptRange& range) {
  std::vector<std::uint8_t> in_context(view.nodes.size(), 0);
  for (const ContextItem& item : view.context) in_context[item.node] = 1;
  for (std::size_t i = 0; i < view.path.size(); ++i) {
    const std::uint32_t node = view.path[i];
    const Entry& e = entry(node);
    if (e.root != JsonKind::kObject || in_context[node]) continue;
    if (!range.walks(i) && i < range.comp_pos) {
      if (e.type == EntryType::kMessage) {
        drop(node, message_what(json_member(&doc(node), "message")), DropReason::kBeforeFirstKept, range.comp_line);
      } else if (e.type == EntryType::kCustomMessage) {
        drop(node, "custom_message", DropReason::kBeforeFirstKept, range.comp_line);
      } else if (e.type == EntryType::kBranchSummary && truthy(json_member(&doc(node), "summary"))) {
        drop(node, "branch_summary", DropReason::kBeforeFirstKept, range.comp_line);
      }
    } else if (range.walks(i) && e.type == EntryType::kBranchSummary) {
      drop(node, "branch_summary", DropReason::kEmptyBranchSummary);
    }
    release_docs();
  }
}

// One item of buildSessionContext's messages through convertToLlm: appended
// to `llm`, or dropped with the reason.
void Builder::add_llm_messages(const ContextItem& item, const KeptRange& range, const ContextEdits& edits,
                               std::vector<LlmMessage>& llm) {
  const std::int64_t node = item.node;
  const Value& e = doc(node);
  if (item.kind == ContextKind::kCompactionSummary) {
    add_compaction_messages(node, e, llm);
    return;
  }
  LlmMessage m;
  m.node = node;
  if (item.kind == ContextKind::kBranchSummary) {
    wrap_summary(m, SentSource::kBranchSummary, json_member(&e, "summary"));
    llm.push_back(std::move(m));
    return;
  }
  const std::int64_t edit = edit_for(edits, item.node);
  const Value* replacement = edit >= 0 ? json_member(&doc(edit), "replacement") : nullptr;
  if (edit >= 0 && replacement && replacement->IsNull()) {
    drop(node,
         item.kind == ContextKind::kCustomMessage ? std::string("custom_message")
                                                  : message_what(json_member(&e, "message")),
         DropReason::kContextEditRemoved, entry(edit).line);
    return;
  }
  if (item.kind == ContextKind::kCustomMessage) {
    m.role = "user";
    m.source = SentSource::kCustomMessage;
    m.content = json_member(&e, "content");
    if (pi.reads_missing_content_as_empty && is_nullish(m.content)) m.content = empty_array();
  } else if (!message_to_llm(node, e, range.position(item.node), range, m)) {
    return;
  }
  apply_context_edit(replacement, m);
  llm.push_back(std::move(m));
}

// A compaction: pi 1.5 sends its systemMessage first; then its summary.
void Builder::add_compaction_messages(std::int64_t node, const Value& e, std::vector<LlmMessage>& llm) {
  const Value* system = pi.sends_compaction_system_message ? json_member(&e, "systemMessage") : nullptr;
  if (truthy(system)) {
    const Value* role = json_member(system, "role");
    LlmMessage s;
    s.node = node;
    s.source = SentSource::kCompactionSystemMessage;
    s.message = system;
    s.content = json_member(system, "content");
    if (is_string(role, "system")) {
      s.role = "system";
      llm.push_back(s);
    } else if (is_string(role, "user") || is_string(role, "toolResult") || is_string(role, "assistant")) {
      s.role = role->GetString();
      llm.push_back(s);
    } else {
      drop(node, "compaction systemMessage", DropReason::kUnknownRole);
    }
  }
  LlmMessage m;
  m.node = node;
  wrap_summary(m, SentSource::kCompactionSummary, json_member(&e, "summary"));
  llm.push_back(std::move(m));
}

// A message entry's message, by role, as buildSessionContext reads it and
// convertToLlm converts it into `m`. False when it is dropped.
bool Builder::message_to_llm(std::int64_t node, const Value& e, std::size_t pos, const KeptRange& range,
                             LlmMessage& m) {
  const Value* message = json_member(&e, "message");
  const Value* role = json_member(message, "role");
  std::string r = role && role->IsString() ? std::string(role->GetString(), role->GetStringLength()) : "";
  if (r == "hookMessage" && view.migrates_v2) r = "custom";
  m.message = message;
  m.content = json_member(message, "content");
  if (pi.reads_missing_content_as_empty && is_nullish(m.content)) {
    if (r == "user" || r == "assistant" || r == "toolResult") m.content = empty_array();
  }
  if (r == "system" && pi.sends_system_messages && range.has_compaction && pos < range.comp_pos) {
    drop(node, "message (system)", DropReason::kSystemBeforeCompaction, range.comp_line);
    return false;
  }
  if (r == "user" || r == "assistant" || r == "toolResult" || (r == "system" && pi.sends_system_messages)) {
    if (r == "system" && is_nullish(m.content)) {
      made.push_back(std::make_unique<Value>("", *allocator));
      m.content = made.back().get();
    }
    m.role = r;
  } else if (r == "custom") {
    m.role = "user";
    m.source = SentSource::kCustomMessage;
  } else if (r == "bashExecution") {
    if (truthy(json_member(message, "excludeFromContext"))) {
      drop(node, "message (bashExecution)", DropReason::kBashExcluded);
      return false;
    }
    m.role = "user";
    m.source = SentSource::kBashExecution;
    m.wrapped = true;
    m.wrapped_text = bash_execution_text(message);
  } else if (r == "branchSummary" || r == "compactionSummary") {
    wrap_summary(m, r == "branchSummary" ? SentSource::kBranchSummary : SentSource::kCompactionSummary,
                 json_member(message, "summary"));
  } else {
    drop(node, message_what(message), r == "system" ? DropReason::kSystemRole : DropReason::kUnknownRole);
    return false;
  }
  return true;
}

// pi 1.5: a context_edit's replacement (when there is one) replaces the
// content of the roles it may edit.
void Builder::apply_context_edit(const Value* replacement, LlmMessage& m) {
  if (!replacement || m.wrapped || !(m.role == "user" || m.role == "assistant" || m.role == "toolResult")) return;
  const Value* content = json_member(replacement, "content");
  if ((m.role == "assistant" || m.role == "toolResult") && content && content->IsString()) {
    auto block = std::make_unique<Value>(rapidjson::kArrayType);
    Value text(rapidjson::kObjectType);
    text.AddMember("type", "text", *allocator);
    text.AddMember("text", Value(content->GetString(), content->GetStringLength(), *allocator), *allocator);
    block->PushBack(text, *allocator);
    made.push_back(std::move(block));
    content = made.back().get();
  }
  m.content = content;
  if (is_nullish(m.content)) m.content = empty_array();  // transformMessages' normalisation
  m.edited = true;
}

// transformMessages, one message at a time: the first pass (thinking,
// content) and the second (skipped turns, synthesized results). False when
// pi-ai throws.
bool Builder::convert(const LlmMessage& m, SecondPass& pass) {
  SentMessage s = sent_message(m);
  if (m.role == "assistant") {
    std::string error = read_assistant_content(m, s);
    if (!error.empty()) return fail(m.node, std::move(error));
    pass.close_pending();
    const Value* stop = json_member(m.message, "stopReason");
    if (is_string(stop, "error") || is_string(stop, "aborted")) {
      drop(m.node, "message (assistant)",
           is_string(stop, "error") ? DropReason::kErrorAssistant : DropReason::kAbortedAssistant);
      return true;
    }
    pass.add_assistant(std::move(s));
  } else if (m.role == "toolResult") {
    s.tool_call_id = sent_value(json_member(m.message, "toolCallId"));
    s.is_error = json_member(m.message, "isError") && json_member(m.message, "isError")->IsTrue();
    pass.add_result(std::move(s));
  } else if (m.role == "system") {
    pass.add_system(std::move(s));
  } else {
    pass.close_pending();
    pass.out(std::move(s));
  }
  return true;
}

// A message as the request holds it, its texts read (an assistant's come
// with its other blocks, read_assistant_content).
SentMessage Builder::sent_message(const LlmMessage& m) {
  SentMessage s;
  s.role = m.role;
  s.source = m.source;
  s.line = m.node >= 0 ? entry(m.node).line : 0;
  s.entry_id = m.node >= 0 ? sent_value(json_member(&doc(m.node), "id")) : SentValue{};
  s.edited = m.edited;
  if (m.wrapped) {
    s.texts.push_back(m.wrapped_text);
  } else if (m.role != "assistant") {
    read_content(m.content, s);
  }
  return s;
}

// transformMessages' first pass over an assistant's content: thinking,
// texts, tool calls, images. The TypeError pi-ai throws on it, or "".
std::string Builder::read_assistant_content(const LlmMessage& m, SentMessage& s) {
  const Value* content = m.content;
  if (!content || !content->IsArray()) {
    return !content || content->IsNull() ? std::string("TypeError: Cannot read properties of ") +
                                               (content ? "null" : "undefined") + " (reading 'flatMap')"
                                         : "TypeError: assistantMsg.content.flatMap is not a function";
  }
  const bool same_model = js_same(sent_value(json_member(m.message, "provider")), model_provider) &&
                          js_same(sent_value(json_member(m.message, "api")), model_api) &&
                          js_same(sent_value(json_member(m.message, "model")), model_id_value);
  for (const Value& block : content->GetArray()) {
    if (block.IsNull()) return "TypeError: Cannot read properties of null (reading 'type')";
    const Value* type = json_member(&block, "type");
    if (is_string(type, "thinking")) {
      if (!read_thinking(block, same_model, pi, s)) return "TypeError: block.thinking.trim is not a function";
    } else if (is_string(type, "text")) {
      s.texts.push_back(block_text(block));
    } else if (is_string(type, "toolCall")) {
      SentToolCall call;
      call.id = sent_value(json_member(&block, "id"));
      call.name = sent_value(json_member(&block, "name"));
      if (const Value* args = json_member(&block, "arguments")) call.arguments = json_text(*args);
      s.tool_calls.push_back(std::move(call));
    } else if (is_string(type, "image")) {
      ++s.images;
    }
  }
  return std::string();
}

// pi-ai throws building the request: nothing is sent.
bool Builder::fail(std::int64_t node, std::string why) {
  rc.request_error = std::move(why);
  rc.request_error_line = node >= 0 ? entry(node).line : 0;
  return false;
}

}  // namespace

ResumeContext build_resume_context(const SessionIndex& index, const PiView& view, const LineText& line_text,
                                   const SentMessageSink& sink) {
  std::size_t count = 0;
  const std::function<void(SentMessage &&)> counted = [&](SentMessage&& m) {
    ++count;
    sink(std::move(m));
  };
  Builder b(index, view, line_text, counted);
  b.build();
  b.rc.message_count = b.rc.request_error.empty() ? count : 0;
  return std::move(b.rc);
}

ResumeContext build_resume_context(const SessionIndex& index, const PiView& view, const LineText& line_text) {
  std::vector<SentMessage> messages;
  ResumeContext rc =
      build_resume_context(index, view, line_text, [&messages](SentMessage&& m) { messages.push_back(std::move(m)); });
  if (rc.request_error.empty()) rc.messages = std::move(messages);  // when pi-ai throws, nothing is sent
  return rc;
}

}  // namespace pihydrate
