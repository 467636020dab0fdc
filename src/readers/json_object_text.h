// Writing a JSON object member by member, in order, so the lines the
// converter builds (R1, R3, R6, R7, R9, R12) read like the entries they are.
#pragma once

#include <string>
#include <string_view>

#include "core/json_spans.h"

namespace pihydrate {

class JsonObjectText {
 public:
  // `key` is written as it is: plain ASCII, nothing to escape.
  JsonObjectText& string(std::string_view key, std::string_view value) { return raw(key, json_quote(value)); }
  JsonObjectText& raw(std::string_view key, std::string_view json) {
    text_ += text_.size() > 1 ? ",\"" : "\"";
    text_ += key;
    text_ += "\":";
    text_ += json;
    return *this;
  }
  std::string text() const { return text_ + "}"; }

 private:
  std::string text_ = "{";
};

}  // namespace pihydrate
