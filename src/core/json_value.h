// Reading members of parsed JSON (RapidJSON's DOM): the one way the code
// looks into a parsed object. A member is found as JSON.parse leaves it, so
// where a key repeats, the last one wins, as in pi.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <rapidjson/document.h>

namespace pihydrate {

using JsonValue = rapidjson::Value;

// The member `key` of `object`, or null when it has none or is not an object.
const JsonValue* json_member(const JsonValue* object, std::string_view key);
inline const JsonValue* json_member(const JsonValue& object, std::string_view key) { return json_member(&object, key); }
// A string member's text: none when absent or not a string.
std::optional<std::string> json_string_member(const JsonValue& object, std::string_view key);
// The same, "" for none.
std::string json_string(const JsonValue& object, std::string_view key);
// A member that is `true`.
bool json_true(const JsonValue& object, std::string_view key);
// An unsigned integer member, or 0.
std::uint64_t json_count(const JsonValue& object, std::string_view key);

}  // namespace pihydrate
