// Hydrating a session held in memory, for tests: hydrate_session into a
// sink that keeps the lines.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "pihydrate/hydrate.h"
#include "pihydrate/session_index.h"

namespace pihydrate {
namespace test_support {

class StringSink : public LineSink {
 public:
  void write_line(std::string_view line) override { lines.emplace_back(line); }
  std::vector<std::string> lines;
};

struct Result {
  bool ok;
  std::vector<std::string> lines;
  HydrateReport report;
};

inline Result hydrate(const std::string& text, HydrateOptions o = {}) {
  auto source = make_memory_source(text);
  SessionIndex index = build_session_index(*source, "in.jsonl");
  auto lines = make_memory_line_source(text);
  if (o.cwd.empty()) o.cwd = "/sandbox";
  StringSink sink;
  Result r;
  r.ok = hydrate_session(index, *lines, o, sink, r.report);
  r.lines = sink.lines;
  return r;
}

// The lines, each ending with '\n'.
inline std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

}  // namespace test_support
}  // namespace pihydrate
