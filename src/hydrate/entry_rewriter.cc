// The bytes of one written entry. A source entry is its original line with a
// few byte edits (ids, references, repairs); everything else, including
// number text, unknown fields and string escapes, is copied unchanged.
#include <string>

#include "core/json_spans.h"
#include "core/message_text.h"
#include "hydrate/plan.h"
#include "pihydrate/formats.h"

namespace pihydrate {
namespace {

std::string member_string(std::string_view line, const std::vector<MemberSpan>& members, std::string_view key) {
  const MemberSpan* m = find_member(members, key);
  if (!m || line[m->value_begin] != '"') return {};
  return json_string_value(line, m->value_begin);
}

// Sets a top-level member: replaces its value, or inserts it after `after`
// (or at the start of the object).
void set_member(ByteEdits& edits, std::string_view line, std::size_t object_begin,
                const std::vector<MemberSpan>& members, std::string_view key, const std::string& value,
                std::string_view after) {
  if (const MemberSpan* m = find_member(members, key)) {
    edits.replace(m->value_begin, m->value_end, value);
    return;
  }
  std::string member = json_quote(key) + ":" + value;
  if (const MemberSpan* a = find_member(members, after)) {
    edits.insert(a->value_end, "," + member);
  } else {
    bool empty = members.empty();
    edits.insert(object_begin + 1, empty ? member : member + ",");
  }
  (void)line;
}

// The object `raw` (found at offset `at` of the text `members` were walked
// in) with member `key` set, as set_member sets it.
std::string with_member(std::string_view raw, std::size_t at, std::vector<MemberSpan> members, std::string_view key,
                        const std::string& value, std::string_view after) {
  for (MemberSpan& m : members) {
    m.begin -= at;
    m.value_begin -= at;
    m.value_end -= at;
  }
  ByteEdits edits;
  set_member(edits, raw, 0, members, key, value, after);
  return edits.apply(raw);
}

// Cuts `text` to at most `max` code points, on a UTF-8 boundary.
std::string cut_text(const std::string& text, std::size_t max) {
  std::size_t points = 0, i = 0;
  while (i < text.size() && points < max) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    i += c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    ++points;
  }
  if (i >= text.size()) return text;
  std::size_t rest = 0;
  for (std::size_t j = i; j < text.size(); ++j)
    if ((static_cast<unsigned char>(text[j]) & 0xC0) != 0x80) ++rest;
  return text.substr(0, i) + "\n[... " + std::to_string(rest) + " more characters cut by pi-hydrate]";
}

// A text block a provider would reject: no text, or white space only.
bool is_blank_text_block(std::string_view line, const std::vector<MemberSpan>& block) {
  if (member_string(line, block, "type") != "text") return false;
  const MemberSpan* text = find_member(block, "text");
  return !text || line[text->value_begin] != '"' ||
         json_string_is_blank(line.substr(text->value_begin + 1, text->value_end - text->value_begin - 2));
}

void edit_message(ByteEdits& edits, std::string_view line, const MemberSpan& message_member, const PlannedEntry& p,
                  const Plan& plan, const Entry& e, const HydrateOptions& options) {
  const std::size_t mb = message_member.value_begin;
  if (line[mb] != '{') return;
  auto members = object_members(line, mb);
  if (p.rename_hook_role) {
    if (const MemberSpan* role = find_member(members, "role"))
      edits.replace(role->value_begin, role->value_end, "\"custom\"");
  }
  if (e.role == Role::kAssistant && e.stop_reason == StopReason::kPending)
    edits.replace(e.stop_reason_field.column - 1, json_value_end(line, e.stop_reason_field.column - 1),
                  e.tool_calls_count ? "\"toolUse\"" : "\"stop\"");
  if (needs_usage(e)) {
    const MemberSpan* usage = find_member(members, "usage");
    if (usage && line[usage->value_begin] == '{') {
      // A cost that is there but not an object (null, a number) is replaced:
      // a second "cost" member would lose to it (JSON.parse keeps the last).
      set_member(edits, line, usage->value_begin, object_members(line, usage->value_begin), "cost",
                 "{\"input\":0,\"output\":0,\"cacheRead\":0,\"cacheWrite\":0,\"total\":0}", "");
    } else {
      set_member(edits, line, mb, members, "usage", kZeroUsageJson, "content");
    }
  }
  if (p.renamed_ids != kNoRenamedIds && e.role == Role::kToolResult)
    edits.replace(e.tool_call_id.column - 1, json_value_end(line, e.tool_call_id.column - 1),
                  json_quote(plan.renamed_call_ids[p.renamed_ids]));
  const MemberSpan* content = find_member(members, "content");
  const ContentRepair repair = content_repair(p, e);
  if (repair == ContentRepair::kFill) {
    set_member(edits, line, mb, members, "content", "[]", "role");
  } else if (repair == ContentRepair::kNoToolOutput) {
    set_member(edits, line, mb, members, "content",
               std::string("[{\"type\":\"text\",\"text\":\"") + kNoToolOutputText + "\"}]", "role");
    return;
  } else if (repair == ContentRepair::kWrap) {
    const std::string_view raw = line.substr(content->value_begin, content->value_end - content->value_begin);
    edits.replace(content->value_begin, content->value_end,
                  json_string_is_blank(raw.substr(1, raw.size() - 2))
                      ? std::string("[]")
                      : "[{\"type\":\"text\",\"text\":" + std::string(raw) + "}]");
  }
  if (p.flatten && e.role == Role::kToolResult) {
    std::string text = content
                           ? content_text(line.substr(content->value_begin, content->value_end - content->value_begin),
                                          OtherBlocks::kMarked)
                           : std::string();
    std::string name = member_string(line, members, "toolName");
    std::string id = member_string(line, members, "toolCallId");
    const MemberSpan* is_error = find_member(members, "isError");
    bool error = is_error && line.substr(is_error->value_begin, is_error->value_end - is_error->value_begin) == "true";
    std::string header = "[tool result of " + (name.empty() ? std::string("a tool") : name) + " (" + id + ")" +
                         (error ? ", error" : "") + "]\n";
    const MemberSpan* ts = find_member(members, "timestamp");
    std::string timestamp = ts ? std::string(line.substr(ts->value_begin, ts->value_end - ts->value_begin)) : "0";
    edits.replace(mb, message_member.value_end,
                  "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":" +
                      json_quote(header + cut_text(text, options.flatten_max_chars)) + "}],\"timestamp\":" + timestamp +
                      "}");
    return;
  }
  if (!content || line[content->value_begin] != '[') return;
  const bool assistant = e.role == Role::kAssistant;
  const bool drop_thinking = assistant && options.thinking == ThinkingPolicy::kDrop;
  const bool renames = assistant && p.renamed_ids != kNoRenamedIds;
  if (!drop_thinking && !(assistant && p.flatten) && !renames && repair != ContentRepair::kDropBlankText) return;
  // Rebuild the content array from its blocks: kept blocks are copied byte
  // for byte, blank text and (--thinking drop) thinking blocks are left out,
  // tool calls become text (flatten) or get their new id.
  std::string out = "[";
  bool first = true, changed = false;
  std::uint32_t call = 0;  // tool calls so far
  for (const ElementSpan& el : array_elements(line, content->value_begin)) {
    std::string_view raw = line.substr(el.begin, el.end - el.begin);
    std::string replacement(raw);
    if (line[el.begin] == '{') {
      auto block = object_members(line, el.begin);
      std::string type = member_string(line, block, "type");
      if ((drop_thinking && (type == "thinking" || type == "redacted_thinking")) || is_blank_text_block(line, block)) {
        changed = true;
        continue;
      }
      // The scanner's calls, in the same order.
      if (type == "toolCall" && renames && !p.flatten && call < e.tool_calls_count) {
        const std::string& new_id = plan.renamed_call_ids[p.renamed_ids + call];
        if (!new_id.empty()) {
          replacement = with_member(raw, el.begin, block, "id", json_quote(new_id), "type");
          changed = true;
        }
      }
      if (type == "toolCall") ++call;
      if (p.flatten && type == "toolCall") {
        const MemberSpan* args = find_member(block, "arguments");
        std::string arguments =
            args ? std::string(line.substr(args->value_begin, args->value_end - args->value_begin)) : "{}";
        replacement = "{\"type\":\"text\",\"text\":" +
                      json_quote("[tool call " + member_string(line, block, "name") + " (" +
                                 member_string(line, block, "id") + ")] " + arguments) +
                      "}";
        changed = true;
      }
    }
    if (!first) out += ",";
    out += replacement;
    first = false;
  }
  out += "]";
  if (changed) edits.replace(content->value_begin, content->value_end, out);
}

std::string id_value(const Plan& plan, std::size_t i) {
  return i == 0 ? std::string("null") : json_quote(plan.entries[i - 1].id);
}

// The entry and message timestamps a synthetic message takes from `e`.
std::string entry_time(const Entry& e) {
  return e.timestamp.is_string() ? json_quote(e.timestamp.text()) : "\"1970-01-01T00:00:00.000Z\"";
}
std::string message_time(const Entry& e) {
  return e.message_timestamp.kind == JsonKind::kNumber ? std::string(e.message_timestamp.text()) : "0";
}

}  // namespace

ContentRepair content_repair(const PlannedEntry& p, const Entry& e) {
  if (e.type != EntryType::kMessage || e.message.kind != JsonKind::kObject) return ContentRepair::kNone;
  const bool assistant = e.role == Role::kAssistant, result = e.role == Role::kToolResult;
  if (!(assistant || result || e.role == Role::kUser) || (p.flatten && result)) return ContentRepair::kNone;
  // pi-ai sends an empty tool result to Anthropic as an empty text block, which it rejects.
  if (result && has_nothing_to_send(e)) return ContentRepair::kNoToolOutput;
  if (e.content_kind == JsonKind::kString) return e.role == Role::kUser ? ContentRepair::kNone : ContentRepair::kWrap;
  if (e.content_kind != JsonKind::kArray) return ContentRepair::kFill;
  return e.content_blank_texts ? ContentRepair::kDropBlankText : ContentRepair::kNone;
}

void append_rendered_entry(std::string& out, const SessionIndex& index, const PiView& view, const Plan& plan,
                           std::size_t i, std::string_view source_line, const HydrateOptions& options,
                           std::vector<ByteEdits::CopiedRun>* copied) {
  const PlannedEntry& p = plan.entries[i];
  const std::string id = json_quote(p.id);
  const std::string parent = id_value(plan, i);

  if (p.synthetic == Synthetic::kMissingResult) {
    const Entry& a = view.entry(index, static_cast<std::uint32_t>(p.call_node));
    const ToolCallRef& call = index.calls_begin(a)[p.call];
    const std::string_view call_id =
        p.renamed_ids != kNoRenamedIds ? std::string_view(plan.renamed_call_ids[p.renamed_ids]) : call.id;
    out += "{\"type\":\"message\",\"id\":" + id + ",\"parentId\":" + parent + ",\"timestamp\":" + entry_time(a) +
           ",\"message\":{\"role\":\"toolResult\",\"toolCallId\":" + json_quote(call_id) +
           ",\"toolName\":" + json_quote(call.name) +
           ",\"content\":[{\"type\":\"text\",\"text\":\"No result was recorded for this tool call (added by "
           "pi-hydrate).\"}],\"isError\":true,\"timestamp\":" +
           message_time(a) + "}}";
    return;
  }
  if (p.synthetic == Synthetic::kUserMessage) {
    const Entry& m = view.entry(index, static_cast<std::uint32_t>(p.call_node));
    out += "{\"type\":\"message\",\"id\":" + id + ",\"parentId\":" + parent + ",\"timestamp\":" + entry_time(m) +
           ",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"No user message was recorded "
           "at the start of this conversation (added by pi-hydrate).\"}],\"timestamp\":" +
           message_time(m) + "}}";
    return;
  }
  if (p.synthetic == Synthetic::kModelChange) {
    const Entry& a = view.entry(index, static_cast<std::uint32_t>(p.call_node));
    std::size_t ob = skip_json_ws(source_line, 0);
    auto members = object_members(source_line, ob);
    std::string provider, model;
    if (const MemberSpan* m = find_member(members, "message"); m && source_line[m->value_begin] == '{') {
      auto msg = object_members(source_line, m->value_begin);
      provider = member_string(source_line, msg, "provider");
      model = member_string(source_line, msg, "model");
    }
    out += "{\"type\":\"model_change\",\"id\":" + id + ",\"parentId\":" + parent + ",\"timestamp\":" + entry_time(a) +
           ",\"provider\":" + json_quote(provider) + ",\"modelId\":" + json_quote(model) + "}";
    return;
  }

  const Entry& e = view.entry(index, static_cast<std::uint32_t>(p.node));
  std::string_view line = source_line;
  // The source line with `edits` applied, appended to `out`. A CRLF file's
  // '\r' stays behind the JSON; pi writes LF only.
  auto finish = [&out, line, copied](const ByteEdits& edits) {
    const std::size_t start = out.size();
    const std::size_t runs_before = copied ? copied->size() : 0;
    edits.append_applied(out, line, copied);
    while (out.size() > start && (out.back() == '\r' || out.back() == ' ' || out.back() == '\t')) out.pop_back();
    if (copied && copied->size() > runs_before && copied->back().out_at + copied->back().length > out.size())
      copied->back().length =
          out.size() - std::min(out.size(), copied->back().out_at);  // what was trimmed is not carried
  };
  // Most entries need only their id and parentId values replaced: splice them
  // at the columns the scanner recorded instead of walking the whole line
  // (which can hold megabytes of tool output).
  const bool assistant =
      e.type == EntryType::kMessage && e.message.kind == JsonKind::kObject && e.role == Role::kAssistant;
  const bool edits_message = p.rename_hook_role || p.flatten || p.renamed_ids != kNoRenamedIds ||
                             content_repair(p, e) != ContentRepair::kNone ||
                             (assistant && (options.thinking == ThinkingPolicy::kDrop ||
                                            e.stop_reason == StopReason::kPending || needs_usage(e)));
  const bool has_references =
      e.type == EntryType::kCompaction || e.type == EntryType::kBranchSummary || e.type == EntryType::kLabel;
  if (!edits_message && !has_references && e.id.present() && e.parent_id.present()) {
    ByteEdits edits;
    const std::size_t id_at = e.id.column - 1, parent_at = e.parent_id.column - 1;
    edits.replace(id_at, json_value_end(line, id_at), id);
    edits.replace(parent_at, json_value_end(line, parent_at), parent);
    finish(edits);
    return;
  }
  // A v1 entry (a converted thread's, nearly all) has neither: both go right
  // after its "type" value, as the walk below would put them.
  if (!edits_message && !has_references && !e.id.present() && !e.parent_id.present() && e.type_field.is_string()) {
    ByteEdits edits;
    const std::size_t type_at = e.type_field.column - 1;
    edits.insert(json_value_end(line, type_at), ",\"id\":" + id + ",\"parentId\":" + parent);
    finish(edits);
    return;
  }
  std::size_t ob = skip_json_ws(line, 0);
  auto members = object_members(line, ob);
  ByteEdits edits;
  if (find_member(members, "id")) {
    set_member(edits, line, ob, members, "id", id, "type");
    set_member(edits, line, ob, members, "parentId", parent, "id");
  } else if (find_member(members, "parentId")) {
    set_member(edits, line, ob, members, "id", id, "type");
    set_member(edits, line, ob, members, "parentId", parent, "type");
  } else {
    // v1 entries: both members go right after "type", where pi writes them.
    const MemberSpan* type = find_member(members, "type");
    std::string both = "\"id\":" + id + ",\"parentId\":" + parent;
    if (type)
      edits.insert(type->value_end, "," + both);
    else
      edits.insert(ob + 1, members.empty() ? both : both + ",");
  }
  if (e.type == EntryType::kCompaction) {
    std::string target =
        p.ref_self || p.ref_target < 0 ? id : json_quote(plan.entries[static_cast<std::size_t>(p.ref_target)].id);
    if (const MemberSpan* index_member = find_member(members, "firstKeptEntryIndex"))
      edits.remove_member(line, *index_member);
    if (const MemberSpan* m = find_member(members, "firstKeptEntryId")) {
      edits.replace(m->value_begin, m->value_end, target);
    } else {
      std::size_t close = members.empty() ? ob + 1 : members.back().value_end;
      edits.insert(close, std::string(members.empty() ? "" : ",") + "\"firstKeptEntryId\":" + target);
    }
  } else if ((e.type == EntryType::kBranchSummary || e.type == EntryType::kLabel) && p.ref_target >= 0) {
    const char* key = e.type == EntryType::kLabel ? "targetId" : "fromId";
    if (const MemberSpan* m = find_member(members, key))
      edits.replace(m->value_begin, m->value_end, json_quote(plan.entries[static_cast<std::size_t>(p.ref_target)].id));
  }
  if (const MemberSpan* message = find_member(members, "message"))
    edit_message(edits, line, *message, p, plan, e, options);
  finish(edits);
}

}  // namespace pihydrate
