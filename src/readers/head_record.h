// A record on one of an input head's lines (InputHead), parsed for a bid.
#pragma once

#include <string_view>

#include <rapidjson/document.h>

#include "core/json_value.h"

namespace pihydrate {

// False when the line is not a JSON object (or is cut short where the head ends).
// Iterative: a head line may nest 100,000 deep (tests/hostile), and every input
// is bid on before any reader's own depth limit applies.
inline bool parse_head_record(std::string_view line, rapidjson::Document& doc) {
  doc.Parse<rapidjson::kParseIterativeFlag>(line.data(), line.size());
  return !doc.HasParseError() && doc.IsObject();
}

}  // namespace pihydrate
