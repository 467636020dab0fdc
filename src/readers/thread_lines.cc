// Building the converted session's lines: the verbatim pi messages (R4,
// R5), chat turns (R3, R7), rebuilt streams (R6), compactions (R9), in
// blocks for the spool.
#include "readers/thread_converter.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/message_text.h"
#include "pihydrate/formats.h"
#include "readers/json_object_text.h"

namespace pihydrate {
namespace thread_converter {

// What the rules compare of an entry (thread_rules::TextOf).
std::string ThreadConverter::text_of(std::size_t env) const {
  const Envelope& e = envs_[env];
  switch (e.kind) {
    case Kind::kChat: return doc_.string_value(doc_.member(e.ref(), "text"));
    case Kind::kPiCompaction: return doc_.string_value(doc_.member(doc_.member(e.payload(), "result"), "summary"));
    case Kind::kRawLine: {
      const RawLine& r = raw_lines_[e.raw_line()];
      if (r.compaction) return std::string(raw_string(r, RawLine::kSummary));
      std::string text;
      raw_text(r, text);
      const std::vector<MemberSpan> members = object_members(text, skip_json_ws(text, 0));
      const MemberSpan* message = find_member(members, "message");
      return message == nullptr ? std::string()
                                : message_text(std::string_view(text).substr(
                                      message->value_begin, message->value_end - message->value_begin));
    }
    default: return message_text(doc_.raw(e.message()));
  }
}

void ThreadConverter::model_of(JsonRef message, std::string& api, std::string& provider, std::string& model) {
  api = doc_.string_value(doc_.member(message, "api"));
  provider = doc_.string_value(doc_.member(message, "provider"));
  model = doc_.string_value(doc_.member(message, "model"));
}

std::string ThreadConverter::message_ms(const Envelope& e, JsonRef message) {
  JsonRef ms = doc_.member(message, "timestamp");
  if (doc_.kind(ms) == RefKind::kNumber) return std::string(doc_.raw(ms));
  if (doc_.kind(e.ts()) == RefKind::kNumber) return std::string(doc_.raw(e.ts()));
  std::int64_t from_iso = ms_from_iso(doc_.string_value(e.ts()));
  if (from_iso >= 0) return std::to_string(from_iso);
  from_iso = ms_from_iso(last_ts_);
  return std::to_string(from_iso >= 0 ? from_iso : 0);
}

std::string ThreadConverter::entry_timestamp(const Envelope& e, JsonRef message) {
  std::string ts;
  std::int64_t ms = 0;
  const RefKind kind = doc_.kind(e.ts());
  if (kind == RefKind::kString) {
    std::string scratch;  // only for an escaped time
    const std::string_view text = doc_.string_text(e.ts(), scratch);
    if (is_iso8601(text)) ts.assign(text);
  } else if (kind == RefKind::kNumber && parse_int64(doc_.raw(e.ts()), ms)) {
    ts = iso_from_ms(ms);
  }
  if (ts.empty() && message.valid()) {
    JsonRef own = doc_.member(message, "timestamp");
    if (doc_.kind(own) == RefKind::kNumber && parse_int64(doc_.raw(own), ms)) ts = iso_from_ms(ms);
  }
  if (ts.empty()) ts = last_ts_.empty() ? out_.timestamp : last_ts_;
  last_ts_ = ts;
  return ts;
}

// R4: the verbatim AssistantMessage, with a pending or missing stopReason
// settled. Its usage and content are repaired as every session's are
// (hydrate_session: missing usage, blank text blocks, string or missing
// content).
namespace {
// Offsets in the document made relative to the message at `base`.
void rebase(std::vector<MemberSpan>& members, std::size_t base) {
  for (MemberSpan& m : members) {
    m.begin -= base;
    m.value_begin -= base;
    m.value_end -= base;
  }
}
}  // namespace

std::vector<MemberSpan> ThreadConverter::members_at(std::size_t base, std::size_t at) const {
  std::vector<MemberSpan> members = doc_.members(JsonRef{base + at, base + at + 1});
  rebase(members, base);
  return members;
}

void ThreadConverter::members_at_into(std::size_t base, std::size_t at, std::vector<MemberSpan>& out) const {
  doc_.members_into(JsonRef{base + at, base + at + 1}, out);
  rebase(out, base);
}

std::vector<ElementSpan> ThreadConverter::elements_at(std::size_t base, std::size_t at) const {
  std::vector<ElementSpan> out;
  for (const JsonRef& el : doc_.elements(JsonRef{base + at, base + at + 1}))
    out.push_back({el.begin - base, el.end - base});
  return out;
}

// A message entry around `msg` with `edits` applied. A compact message is
// written into the spool's block (or the session text) in place: the message
// is most of the line, and its bytes are copied once. The block is handed
// over first if the line might not fit: the hint counts every byte an edit
// inserts, never less than the line grows, sometimes more.
void ThreadConverter::emit_message(std::size_t env, const ByteEdits& edits, std::string_view msg) {
  const Envelope& e = envs_[env];
  const std::string timestamp = json_quote(entry_timestamp(e, e.message()));
  const bool compact = doc_.is_compact(e.message());
  // A pretty-printed message is built apart, then compacted into the text.
  std::string apart;
  std::string& out = compact ? open_line(msg.size() + edits.inserted_bytes() + timestamp.size() + 64) : apart;
  const std::size_t start = out.size();
  out += "{\"type\":\"message\",\"timestamp\":";
  out += timestamp;
  out += ",\"message\":";
  // Compacting would move the bytes: only a compact line's runs are the export's as they are.
  // A line linked as it is written (raw_thread.cc) moves: it borrows nothing.
  const bool borrowing = compact && !in_memory() && options_.borrow_from_export && !raw_;
  copied_.clear();
  edits.append_applied(out, msg, borrowing ? &copied_ : nullptr);
  for (const ByteEdits::CopiedRun& run : copied_)
    if (run.length >= options_.min_borrowed_run)
      spool_block_.borrowed.push_back({run.out_at, e.message().begin + run.from, run.length});
  out += '}';
  if (compact)
    close_line(start);
  else
    emit_line(apart);
  record_item(env);
}

void ThreadConverter::emit_assistant(std::size_t env) {
  const Envelope& e = envs_[env];
  // Work on the message's own bytes so edits stay local to it.
  const std::string_view msg = doc_.raw(e.message());
  const std::size_t base = e.message().begin;
  const std::vector<MemberSpan> members = members_at(base, 0);
  ByteEdits edits;
  auto append_member = [&](const std::string& member) {
    if (members.empty())
      edits.insert(1, member);
    else
      edits.insert(members.back().value_end, "," + member);
  };
  const MemberSpan* content = find_member(members, "content");
  bool has_calls = false;
  std::vector<std::string> call_ids;  // each toolCall block's id ("" when not a string), for the item
  if (content && msg[content->value_begin] == '[') {
    std::string type_scratch;  // an escaped type's text
    for (const ElementSpan& el : elements_at(base, content->value_begin)) {
      if (msg[el.begin] != '{') continue;
      std::vector<MemberSpan>& block = block_members_;  // walked once each: not cached
      members_at_into(base, el.begin, block);
      const MemberSpan* t = find_member(block, "type");
      if (!t || doc_.string_text({base + t->value_begin, base + t->value_end}, type_scratch) != "toolCall") continue;
      has_calls = true;
      const MemberSpan* id = find_member(block, "id");
      call_ids.push_back(id && msg[id->value_begin] == '"' ? json_string_value(msg, id->value_begin) : std::string());
    }
  }
  const MemberSpan* stop = find_member(members, "stopReason");
  thread_rules::PiMessageShape shape;
  shape.has_timestamp = find_member(members, "timestamp") != nullptr;
  shape.stop_reason_settled = thread_rules::is_settled_stop_reason(
      stop && msg[stop->value_begin] == '"' ? json_string_value(msg, stop->value_begin) : "");
  const thread_rules::MessageRepairs repairs = thread_rules::message_repairs(e.kind, shape);
  if (repairs.settle_stop_reason) {
    std::string settled = has_calls ? "\"toolUse\"" : "\"stop\"";
    if (stop)
      edits.replace(stop->value_begin, stop->value_end, settled);
    else
      append_member("\"stopReason\":" + settled);
    out_.repairs["settled-pending-stop-reason"]++;
  }
  if (repairs.add_timestamp) append_member("\"timestamp\":" + message_ms(e, e.message()));
  settle_assistant(env, edits, msg, call_ids);
}

void ThreadConverter::settle_assistant(std::size_t env, const ByteEdits& edits, std::string_view msg,
                                       const std::vector<std::string>& call_ids) {
  last_assistant_ = static_cast<std::int64_t>(env);
  last_model_read_ = false;
  emit_message(env, edits, msg);
  for (const std::string& id : call_ids) add_tool_id(id);
}

void ThreadConverter::read_last_model() {
  if (last_model_read_) return;
  model_of(envs_[static_cast<std::size_t>(last_assistant_)].message(), last_api_, last_provider_, last_model_);
  last_model_read_ = true;
}

// R5: the verbatim ToolResultMessage (its content repaired as every
// session's is, by hydrate_session).
void ThreadConverter::emit_tool_result(std::size_t env) {
  const Envelope& e = envs_[env];
  const std::string_view msg = doc_.raw(e.message());
  auto members = members_at(e.message().begin, 0);
  thread_rules::PiMessageShape shape;
  shape.has_timestamp = find_member(members, "timestamp") != nullptr;
  ByteEdits edits;
  if (thread_rules::message_repairs(e.kind, shape).add_timestamp)
    edits.insert(members.empty() ? 1 : members.back().value_end,
                 std::string(members.empty() ? "" : ",") + "\"timestamp\":" + message_ms(e, e.message()));
  emit_message(env, edits, msg);
}

// A message entry: {"type":"message","timestamp":…,"message":…}.
std::string ThreadConverter::message_line(std::string_view timestamp, std::string_view message) {
  return JsonObjectText().string("type", "message").string("timestamp", timestamp).raw("message", message).text();
}

// R3: a chat user turn; attachments become image blocks.
std::string ThreadConverter::chat_user_line(const Envelope& e) {
  std::string text = doc_.string_value(doc_.member(e.ref(), "text"));
  std::vector<JsonRef> attachments = doc_.elements(doc_.member(e.ref(), "attachments"));
  std::string content;
  if (attachments.empty()) {
    content = json_quote(text);
  } else {
    content = "[";
    bool first = true;
    if (!text.empty()) {
      content += JsonObjectText().string("type", "text").string("text", text).text();
      first = false;
    }
    for (std::size_t k = 0; k < attachments.size(); ++k) {
      JsonRef a = attachments[k];
      JsonRef data = doc_.member(a, "data"), mime = doc_.member(a, "mimeType");
      std::string type = doc_.string_value(doc_.member(a, "type"));
      if ((type != "image" && !type.empty()) || doc_.kind(data) != RefKind::kString ||
          doc_.kind(mime) != RefKind::kString) {
        warn(e.path() + ".attachments[" + std::to_string(k) + "]", a.begin,
             "not an image with data and mimeType; left out");
        out_.repairs["skipped-attachment"]++;
        continue;
      }
      if (!first) content += ",";
      content +=
          JsonObjectText().string("type", "image").raw("data", doc_.raw(data)).raw("mimeType", doc_.raw(mime)).text();
      first = false;
      out_.repairs["image-attachment"]++;
    }
    content += "]";
  }
  const std::string message =
      JsonObjectText().string("role", "user").raw("content", content).raw("timestamp", message_ms(e, {})).text();
  return message_line(entry_timestamp(e, {}), message);
}

// R7: a chat assistant turn that mirrors no pi.assistant becomes a text-only
// assistant message of the thread's model.
void ThreadConverter::resume_model(std::string& api, std::string& provider, std::string& model) {
  JsonRef thread_model = doc_.member(thread_, "model");
  if (doc_.kind(thread_model) == RefKind::kObject) {
    provider = doc_.string_value(doc_.member(thread_model, "provider"));
    model = doc_.string_value(doc_.member(thread_model, "modelId"));
    api = doc_.string_value(doc_.member(thread_model, "api"));
  }
  if (provider.empty() || model.empty()) {
    read_last_model();
    api = last_api_, provider = last_provider_, model = last_model_;
  }
  if (provider.empty() || model.empty()) api = "openai-completions", provider = "pi-hydrate", model = "imported";
  if (api.empty()) api = "openai-completions";
}

std::string ThreadConverter::chat_assistant_line(const Envelope& e) {
  std::string api, provider, model;
  resume_model(api, provider, model);
  out_.repairs["chat-assistant-as-text-message"]++;
  const std::string text = doc_.string_value(doc_.member(e.ref(), "text"));
  const std::string message =
      JsonObjectText()
          .string("role", "assistant")
          .raw("content", "[" + JsonObjectText().string("type", "text").string("text", text).text() + "]")
          .string("api", api)
          .string("provider", provider)
          .string("model", model)
          .raw("usage", kZeroUsageJson)
          .string("stopReason", "stop")
          .raw("timestamp", message_ms(e, {}))
          .text();
  return message_line(entry_timestamp(e, {}), message);
}

// R6 --partial keep|text: rebuild an assistant message from its stream.
std::string ThreadConverter::partial_line(const std::vector<std::size_t>& group) {
  std::map<std::int64_t, std::pair<std::string, std::string>> blocks;  // contentIndex -> (type, text or raw)
  for (std::size_t pos : group) {
    reading(envs_[pos]);
    JsonRef event = doc_.member(envs_[pos].payload(), "event");
    std::string type = doc_.string_value(doc_.member(event, "type"));
    JsonRef index_ref = doc_.member(event, "contentIndex");
    std::int64_t index = 0;
    if (doc_.kind(index_ref) == RefKind::kNumber) parse_int64(doc_.raw(index_ref), index);
    if (type == "text_delta" || type == "thinking_delta") {
      auto& b = blocks[index];
      b.first = type == "text_delta" ? "text" : "thinking";
      b.second += doc_.string_value(doc_.member(event, "delta"));
    } else if ((type == "text_end" || type == "thinking_end") &&
               doc_.kind(doc_.member(event, "content")) == RefKind::kString) {
      blocks[index] = {type == "text_end" ? "text" : "thinking", doc_.string_value(doc_.member(event, "content"))};
    } else if (type == "toolcall_end" && doc_.kind(doc_.member(event, "toolCall")) == RefKind::kObject) {
      blocks[index] = {"toolCall", std::string(doc_.raw(doc_.member(event, "toolCall")))};
    }
  }
  const bool text_only = options_.partial == PartialPolicy::kText;
  std::string content = "[";
  bool first = true;
  for (const auto& [index, block] : blocks) {
    if (text_only && block.first != "text") continue;
    if (block.first != "toolCall" && block.second.empty()) continue;
    if (!first) content += ",";
    first = false;
    if (block.first == "text")
      content += JsonObjectText().string("type", "text").string("text", block.second).text();
    else if (block.first == "thinking")
      content += JsonObjectText().string("type", "thinking").string("thinking", block.second).text();
    else
      content += block.second;
  }
  content += "]";
  const Envelope& last = envs_[group.back()];
  JsonRef key = doc_.member(last.payload(), "streamKey");
  std::string ms = doc_.kind(key) == RefKind::kNumber ? std::string(doc_.raw(key)) : message_ms(last, {});
  std::string api, provider, model;
  resume_model(api, provider, model);
  if (content == "[]") {
    warn(last.path(), last.ref().begin, "an interrupted stream has nothing to keep; dropped");
    out_.repairs["dropped-interrupted-stream"]++;
    return {};
  }
  out_.repairs[text_only ? "partial-stream-as-text" : "partial-stream-kept-aborted"]++;
  JsonObjectText message;
  message.string("role", "assistant")
      .raw("content", content)
      .string("api", api)
      .string("provider", provider)
      .string("model", model)
      .raw("usage", kZeroUsageJson);
  if (text_only)
    message.string("stopReason", "stop");
  else
    message.string("stopReason", "aborted").string("errorMessage", "pi-hydrate: stream interrupted");
  message.raw("timestamp", ms);
  return message_line(entry_timestamp(last, {}), message.text());
}

// Appends one converted line to the session text (a pretty-printed export
// must still give one line per entry) and remembers where it came from.
void ThreadConverter::push(std::size_t env, std::string line, bool compact) {
  emit_line(line, compact);
  record_item(env);
}

void ThreadConverter::record_item(std::size_t env) {
  Item item;
  item.ids_begin = tool_ids_.size();
  items_.push_back(item);
  item_of_env_[env] = static_cast<std::int32_t>(items_.size() - 1);
  const Envelope& e = envs_[env];
  out_.origins.push_back(origin_of(e));
}

ThreadOrigin ThreadConverter::origin_of(const Envelope& e) const {
  ThreadOrigin o;
  o.entry = static_cast<std::uint32_t>(e.index);
  o.id_begin = e.id_begin;  // in ids_, which becomes out_.origin_ids
  o.id_size = e.id_size;
  doc_.position(e.ref().begin, o.line, o.column);
  return o;
}

// Blocks stay within their MiB unless one line is bigger: a string grown
// past its capacity would double it, in every buffer the spool cycles.
constexpr std::size_t kSpoolBlock = std::size_t{1} << 20;

std::string& ThreadConverter::open_line(std::size_t size_hint) {
  if (in_memory()) return out_.session;
  std::string& block = spool_block_.bytes;
  if (linking_) size_hint += 64;  // the id and parent a lossy line gets (X5)
  if (!block.empty() && block.size() + size_hint + 1 > kSpoolBlock) flush_spool();
  if (block.capacity() < kSpoolBlock) block.reserve(kSpoolBlock);
  return block;
}

void ThreadConverter::close_line(std::size_t start) {
  std::string& target = in_memory() ? out_.session : spool_block_.bytes;
  // X5: with raw entries, a lossy line gets its id and parent as it is written.
  if (linking_ && !raw_line_open_) link_lossy_line(target, start);
  raw_line_open_ = false;
  target += '\n';
  out_.session_bytes += target.size() - start;
  if (!in_memory() && target.size() >= kSpoolBlock) flush_spool();
}

// One line of the converted session (compacted: a pretty-printed export must
// still give one line per entry), into memory or the spool file.
void ThreadConverter::emit_line(std::string_view line, bool compact) {
  std::string& target = open_line(line.size());
  const std::size_t before = target.size();
  if (compact)
    target.append(line);
  else
    append_compact_json(target, line);
  close_line(before);
}

void ThreadConverter::flush_spool() {
  if (!in_memory() && !spool_block_.bytes.empty()) options_.spool(spool_block_);
  spool_block_.clear();
}

void ThreadConverter::add_tool_id(std::string_view id) {
  const auto size = static_cast<std::uint32_t>(id.size());
  tool_ids_.append(reinterpret_cast<const char*>(&size), sizeof size);
  tool_ids_.append(id);
  items_.back().id_count++;
}

std::vector<std::string_view> ThreadConverter::tool_ids_of(const Item& item) const {
  std::vector<std::string_view> ids;
  std::size_t at = item.ids_begin;
  for (std::uint32_t k = 0; k < item.id_count; ++k) {
    std::uint32_t size = 0;
    std::memcpy(&size, tool_ids_.data() + at, sizeof size);
    ids.push_back(std::string_view(tool_ids_).substr(at + sizeof size, size));
    at += sizeof size + size;
  }
  return ids;
}

// R9: a compaction, anchored through firstKeptRef, piEntryId, the last user
// turn before it, or itself. v1's firstKeptEntryIndex counts the header as 0.
std::string ThreadConverter::compaction_line(std::size_t pos, std::size_t item_pos, bool& skipped) {
  const Envelope& e = envs_[pos];
  JsonRef result = doc_.member(e.payload(), "result");
  JsonRef aborted = doc_.member(e.payload(), "aborted");
  skipped = false;
  if (doc_.raw(aborted) == "true" || doc_.kind(result) != RefKind::kObject ||
      doc_.kind(doc_.member(result, "summary")) != RefKind::kString) {
    const bool was_aborted = doc_.raw(aborted) == "true";
    warn(e.path(), e.ref().begin,
         was_aborted ? "aborted compaction skipped" : "compaction without a result summary skipped");
    out_.repairs[was_aborted ? "skipped-aborted-compaction" : "skipped-compaction-without-summary"]++;
    skipped = true;
    return {};
  }
  auto first_item_from = [&](std::size_t env_pos) -> std::int64_t {
    for (std::size_t j = env_pos; j < pos; ++j)
      if (item_of_env_[j] >= 0) return item_of_env_[j];
    return -1;
  };
  const auto found = compaction_refs_.find(pos);
  const CompactionRefs refs = found != compaction_refs_.end() ? found->second : CompactionRefs{};
  std::int64_t by_first_kept_ref = -1, by_pi_entry_id = -1;
  if (refs.first_kept_ref >= 0) {
    const auto j = static_cast<std::size_t>(refs.first_kept_ref);
    // A chat turn a pi.user replaced became the pi.user's line.
    by_first_kept_ref = refs.ref_kept && replaced_by_[j] >= 0 ? item_of_env_[static_cast<std::size_t>(replaced_by_[j])]
                                                              : first_item_from(j);
  }
  if (refs.pi_entry >= 0 && static_cast<std::size_t>(refs.pi_entry) < pos)
    by_pi_entry_id = item_of_env_[static_cast<std::size_t>(refs.pi_entry)];
  const bool has_first_kept_ref = !doc_.string_value(doc_.member(e.payload(), "firstKeptRef")).empty();
  const thread_rules::CompactionAnchor anchor = thread_rules::anchor_compaction(
      has_first_kept_ref, by_first_kept_ref, by_pi_entry_id, LinesSoFar{*this, item_pos});
  if (anchor.first_kept_ref_unused)
    warn(e.path() + ".data.firstKeptRef", e.ref().begin, "names no earlier entry; falling back");
  out_.repairs[anchor.line < 0 ? std::string("compaction-self-anchored")
                               : std::string("compaction-anchored-by-") + anchor.how]++;
  JsonObjectText line;
  line.string("type", "compaction")
      .string("timestamp", entry_timestamp(e, {}))
      .raw("summary", doc_.raw(doc_.member(result, "summary")));
  const JsonRef tokens = doc_.member(result, "tokensBefore");
  line.raw("tokensBefore", doc_.kind(tokens) == RefKind::kNumber ? doc_.raw(tokens) : std::string_view("0"));
  const JsonRef details = doc_.member(result, "details");
  if (details.valid()) line.raw("details", doc_.raw(details));
  if (anchor.line >= 0) line.raw("firstKeptEntryIndex", std::to_string(anchor.line + 1));
  return line.text();
}

void ThreadConverter::emit_all() {
  item_of_env_.assign(envs_.size(), -1);
  for (std::size_t i = 0; i < envs_.size(); ++i) {
    const Envelope& e = envs_[i];
    reading(e);
    if (auto p = partial_at_.find(i); p != partial_at_.end()) {
      std::string line = partial_line(partial_groups_[p->second]);
      if (!line.empty()) push(i, std::move(line));
    }
    if (dropped_[i]) continue;
    if (e.kind == Kind::kChat) {
      std::string role = doc_.string_value(doc_.member(e.ref(), "role"));
      if (role == "user") {
        if (replaced_by_[i] >= 0) {
          const Envelope& u = envs_[static_cast<std::size_t>(replaced_by_[i])];
          push(static_cast<std::size_t>(replaced_by_[i]),
               message_line(entry_timestamp(e, u.message()), doc_.raw(u.message())));
        } else {
          push(i, chat_user_line(e));
        }
        items_.back().is_user_turn = true;
      } else if (role == "assistant") {
        push(i, chat_assistant_line(e));
      } else {
        out_.repairs["dropped-system-chat"]++;
      }
    } else if (e.kind == Kind::kPiUser) {
      push(i, message_line(entry_timestamp(e, e.message()), doc_.raw(e.message())));
      items_.back().is_user_turn = true;
    } else if (e.kind == Kind::kPiAssistant) {
      // The message is copied verbatim around edits that add no whitespace;
      // its item gets its tool calls' ids.
      emit_assistant(i);
    } else if (e.kind == Kind::kPiToolResult) {
      emit_tool_result(i);
      items_.back().is_tool_result = true;
      add_tool_id(doc_.string_value(doc_.member(e.message(), "toolCallId")));
    } else if (e.kind == Kind::kPiCompaction) {
      bool skipped = false;
      std::string line = compaction_line(i, items_.size(), skipped);
      if (!skipped) push(i, std::move(line));
    } else if (e.kind == Kind::kRawLine) {
      emit_raw_line(i);
    }
  }
}

}  // namespace thread_converter
}  // namespace pihydrate
