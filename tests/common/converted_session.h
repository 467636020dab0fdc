// What the transcript readers' unit tests look at: a reader's conversion (the
// session text it wrote, and the rest of what it read) and that text's entries.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include "pihydrate/reader.h"

namespace pihydrate::test_support {

struct Converted : ReadSession {
  std::string session;
};

// Each line of the converted session, parsed; a line that does not parse fails the test.
inline std::vector<rapidjson::Document> entries_of(const Converted& s) {
  std::vector<rapidjson::Document> out;
  std::istringstream in(s.session);
  for (std::string line; std::getline(in, line);) {
    out.emplace_back();
    out.back().Parse(line.c_str());
    EXPECT_FALSE(out.back().HasParseError()) << line;
  }
  return out;
}

// A message entry's role, else the entry's type.
inline std::string role_of(const rapidjson::Document& e) {
  if (!e.HasMember("message")) return e["type"].GetString();
  return e["message"]["role"].GetString();
}

// The format the registry finds for an input starting with `head`, or "none".
inline std::string format_of(const std::string& head) {
  const Reader* r = ReaderRegistry::standard().choose(make_input_head(head, true));
  return r == nullptr ? "none" : r->info().name;
}

// Each entry as "role:texts" ("[type]" for a block that is not text), or its type when it is no message.
inline std::vector<std::string> texts_of(const Converted& s) {
  std::vector<std::string> out;
  for (const auto& e : entries_of(s)) {
    if (!e.HasMember("message")) {
      out.push_back(e["type"].GetString());
      continue;
    }
    const auto& m = e["message"];
    std::string t = std::string(m["role"].GetString()) + ":";
    for (const auto& b : m["content"].GetArray()) {
      const std::string type = b["type"].GetString();
      t += type == "text" ? b["text"].GetString() : "[" + type + "]";
    }
    out.push_back(t);
  }
  return out;
}

// All a conversion gives: the session, each finding (line, column, message) and the repairs counted.
inline std::string everything_of(const Converted& s) {
  std::string out = s.session;
  for (const Diagnostic& d : s.diagnostics)
    out += std::to_string(d.line) + ":" + std::to_string(d.column) + " " + d.message + "\n";
  for (const auto& [repair, n] : s.repairs) out += repair + "=" + std::to_string(n) + "\n";
  return out;
}

// A JSONL input whose every line has a member with an escaped key (which no
// reader reads) first: the readers that skim a record's line parse such a
// line into a Document instead, so the two paths can be compared.
inline std::string with_escaped_keys(const std::string& jsonl) {
  std::string out;
  std::istringstream in(jsonl);
  for (std::string line; std::getline(in, line);)
    out += (line.rfind('{', 0) == 0 ? "{\"\\u0078\":0," + line.substr(1) : line) + "\n";
  return out;
}

}  // namespace pihydrate::test_support
