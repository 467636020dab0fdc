// Member access on parsed JSON (json_value.h).
#include "core/json_value.h"

namespace pihydrate {

const JsonValue* json_member(const JsonValue* object, std::string_view key) {
  if (object == nullptr || !object->IsObject()) return nullptr;
  const JsonValue* found = nullptr;
  for (auto it = object->MemberBegin(); it != object->MemberEnd(); ++it)
    if (std::string_view(it->name.GetString(), it->name.GetStringLength()) == key) found = &it->value;
  return found;
}

std::optional<std::string> json_string_member(const JsonValue& object, std::string_view key) {
  const JsonValue* v = json_member(object, key);
  if (v == nullptr || !v->IsString()) return std::nullopt;
  return std::string(v->GetString(), v->GetStringLength());
}

std::string json_string(const JsonValue& object, std::string_view key) {
  return json_string_member(object, key).value_or(std::string());
}

bool json_true(const JsonValue& object, std::string_view key) {
  const JsonValue* v = json_member(object, key);
  return v != nullptr && v->IsTrue();
}

std::uint64_t json_count(const JsonValue& object, std::string_view key) {
  const JsonValue* v = json_member(object, key);
  return v != nullptr && v->IsUint64() ? v->GetUint64() : 0;
}

}  // namespace pihydrate
