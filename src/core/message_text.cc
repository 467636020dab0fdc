// A message's text (message_text.h).
#include "core/message_text.h"

#include "core/json_spans.h"

namespace pihydrate {
namespace {

std::string string_member(std::string_view json, const std::vector<MemberSpan>& members, std::string_view key) {
  const MemberSpan* m = find_member(members, key);
  return m != nullptr && json[m->value_begin] == '"' ? json_string_value(json, m->value_begin) : std::string();
}

}  // namespace

std::string content_text(std::string_view content_json, OtherBlocks other) {
  const std::size_t at = skip_json_ws(content_json, 0);
  if (at >= content_json.size()) return {};
  if (content_json[at] == '"') return json_string_value(content_json, at);
  if (content_json[at] != '[') return {};
  std::string text;
  for (const ElementSpan& element : array_elements(content_json, at)) {
    if (content_json[element.begin] != '{') continue;
    const std::vector<MemberSpan> block = object_members(content_json, element.begin);
    const std::string type = string_member(content_json, block, "type");
    if (type != "text" && other == OtherBlocks::kLeftOut) continue;
    if (!text.empty()) text += "\n";
    if (type == "text")
      text += string_member(content_json, block, "text");
    else
      text += "[" + type + "]";
  }
  return text;
}

std::string message_text(std::string_view message_json) {
  const std::size_t at = skip_json_ws(message_json, 0);
  if (at >= message_json.size() || message_json[at] != '{') return {};
  const std::vector<MemberSpan> members = object_members(message_json, at);
  const MemberSpan* content = find_member(members, "content");
  if (content == nullptr) return {};
  return content_text(message_json.substr(content->value_begin, content->value_end - content->value_begin));
}

}  // namespace pihydrate
