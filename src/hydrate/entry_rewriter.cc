// The bytes of one written entry. A source entry is its original line with a
// few byte edits (ids, references, repairs); everything else, including
// number text, unknown fields and string escapes, is copied unchanged.
#include <string>

#include "core/json_spans.h"
#include "hydrate/plan.h"

namespace pihydrate {
namespace {

std::string member_string(std::string_view line, const std::vector<MemberSpan>& members, std::string_view key) {
  const MemberSpan* m = find_member(members, key);
  if (!m || line[m->value_begin] != '"') return {};
  return json_string_value(line, m->value_begin);
}

// Sets a top-level member: replaces its value, or inserts it after `after`
// (or at the start of the object).
void set_member(ByteEdits& edits, std::string_view line, std::size_t object_begin, const std::vector<MemberSpan>& members,
                std::string_view key, const std::string& value, std::string_view after) {
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

// Text of a content array: text blocks joined, images as a marker.
std::string content_text(std::string_view line, const MemberSpan& content) {
  if (line[content.value_begin] == '"') return json_string_value(line, content.value_begin);
  if (line[content.value_begin] != '[') return {};
  std::string text;
  for (const ElementSpan& el : array_elements(line, content.value_begin)) {
    if (line[el.begin] != '{') continue;
    auto block = object_members(line, el.begin);
    std::string type = member_string(line, block, "type");
    if (!text.empty()) text += "\n";
    if (type == "text") text += member_string(line, block, "text");
    else if (type == "image") text += "[image]";
    else text += "[" + type + "]";
  }
  return text;
}

void edit_message(ByteEdits& edits, std::string_view line, const MemberSpan& message_member, const PlannedEntry& p,
                  const Entry& e, const HydrateOptions& options) {
  const std::size_t mb = message_member.value_begin;
  if (line[mb] != '{') return;
  auto members = object_members(line, mb);
  if (p.rename_hook_role) {
    if (const MemberSpan* role = find_member(members, "role")) edits.replace(role->value_begin, role->value_end, "\"custom\"");
  }
  const MemberSpan* content = find_member(members, "content");
  if (p.flatten && e.role == Role::kToolResult) {
    std::string text = content ? content_text(line, *content) : std::string();
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
                      json_quote(header + cut_text(text, options.flatten_max_chars)) + "}],\"timestamp\":" + timestamp + "}");
    return;
  }
  if (e.role != Role::kAssistant || !content || line[content->value_begin] != '[') return;
  const bool drop_thinking = options.thinking == ThinkingPolicy::kDrop;
  if (!drop_thinking && !p.flatten) return;
  // Rebuild the content array from its blocks: kept blocks are copied byte
  // for byte, thinking blocks are left out, tool calls become text.
  std::string out = "[";
  bool first = true, changed = false;
  for (const ElementSpan& el : array_elements(line, content->value_begin)) {
    std::string_view raw = line.substr(el.begin, el.end - el.begin);
    std::string replacement(raw);
    if (line[el.begin] == '{') {
      auto block = object_members(line, el.begin);
      std::string type = member_string(line, block, "type");
      if (drop_thinking && (type == "thinking" || type == "redacted_thinking")) {
        changed = true;
        continue;
      }
      if (p.flatten && type == "toolCall") {
        const MemberSpan* args = find_member(block, "arguments");
        std::string arguments = args ? std::string(line.substr(args->value_begin, args->value_end - args->value_begin)) : "{}";
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

}  // namespace

void append_rendered_entry(std::string& out, const SessionIndex& index, const PiView& view, const Plan& plan,
                           std::size_t i, std::string_view source_line, const HydrateOptions& options,
                           std::vector<ByteEdits::CopiedRun>* copied) {
  const PlannedEntry& p = plan.entries[i];
  const std::string id = json_quote(p.id);
  const std::string parent = id_value(plan, i);

  if (p.synthetic == Synthetic::kMissingResult) {
    const Entry& a = view.entry(index, static_cast<std::uint32_t>(p.call_node));
    const ToolCallRef& call = index.calls_begin(a)[p.call];
    std::string ts = a.timestamp.is_string() ? json_quote(a.timestamp.text()) : "\"1970-01-01T00:00:00.000Z\"";
    std::string mts = a.message_timestamp.kind == JsonKind::kNumber ? std::string(a.message_timestamp.text()) : "0";
    out += "{\"type\":\"message\",\"id\":" + id + ",\"parentId\":" + parent + ",\"timestamp\":" + ts +
           ",\"message\":{\"role\":\"toolResult\",\"toolCallId\":" + json_quote(call.id) +
           ",\"toolName\":" + json_quote(call.name) +
           ",\"content\":[{\"type\":\"text\",\"text\":\"No result was recorded for this tool call (added by "
           "pi-hydrate).\"}],\"isError\":true,\"timestamp\":" + mts + "}}";
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
    std::string ts = a.timestamp.is_string() ? json_quote(a.timestamp.text()) : "\"1970-01-01T00:00:00.000Z\"";
    out += "{\"type\":\"model_change\",\"id\":" + id + ",\"parentId\":" + parent + ",\"timestamp\":" + ts +
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
      copied->back().length = out.size() - std::min(out.size(), copied->back().out_at);  // what was trimmed is not carried
  };
  // Most entries need only their id and parentId values replaced: splice them
  // at the columns the scanner recorded instead of walking the whole line
  // (which can hold megabytes of tool output).
  const bool edits_message = p.rename_hook_role || p.flatten ||
                             (options.thinking == ThinkingPolicy::kDrop && e.role == Role::kAssistant);
  const bool has_references = e.type == EntryType::kCompaction || e.type == EntryType::kBranchSummary ||
                              e.type == EntryType::kLabel;
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
    if (type) edits.insert(type->value_end, "," + both);
    else edits.insert(ob + 1, members.empty() ? both : both + ",");
  }
  if (e.type == EntryType::kCompaction) {
    std::string target = p.ref_self || p.ref_target < 0 ? id : json_quote(plan.entries[static_cast<std::size_t>(p.ref_target)].id);
    if (const MemberSpan* index_member = find_member(members, "firstKeptEntryIndex")) edits.remove_member(line, *index_member);
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
    edit_message(edits, line, *message, p, e, options);
  finish(edits);
}

}  // namespace pihydrate
