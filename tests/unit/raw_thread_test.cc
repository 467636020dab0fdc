// Thread exports with raw pi entries (raw_thread.cc, docs/thread-export.md
// X1-X7). The promise of X7 is checked on every v3 session among the golden
// inputs: its lines carried as pi.entry, or as a snapshot, hydrate to the
// bytes `--session` gives for the file itself.
#include "readers/thread_export.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include <rapidjson/document.h>
#include "common/text_files.h"

#include "core/json_spans.h"
#include "pihydrate/pihydrate.h"

namespace pihydrate {
namespace {

using test_support::read_file;
using test_support::TextSink;

namespace fs = std::filesystem;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string export_of(const std::vector<std::string>& entries) {
  std::string text = R"({"format":"thread-export","version":1,"thread":{"id":"thr_raw"},"entries":[)";
  for (std::size_t i = 0; i < entries.size(); ++i) text += (i ? "," : "") + entries[i];
  return text + "]}";
}

std::string raw_entry(std::size_t i, const std::string& line) {
  return R"({"id":"raw-)" + std::to_string(i) + R"(","kind":"pi.entry","data":{"line":)" + json_quote(line) + "}}";
}

struct Hydrated {
  bool ok = false;
  std::string text;
  Diagnostics diagnostics;
};

Hydrated hydrate(bool thread, const std::string& bytes) {
  HydrateRequest request;
  request.cwd = "/tmp";
  TextSink sink;
  const Input input = Input::bytes(bytes, thread ? "t.json" : "s.jsonl");
  const HydrateResult result = thread ? hydrate_thread(input, request, Output::lines(sink))
                                      : hydrate_session(input, request, Output::lines(sink));
  return {result.ok, sink.text, result.report.diagnostics};
}

// The golden inputs that are v3 sessions pi loads: every line an object with an id after the header.
std::vector<fs::path> v3_sessions() {
  std::vector<fs::path> found;
  for (const auto& item : fs::recursive_directory_iterator(fs::path(PIHYDRATE_SOURCE_DIR) / "tests" / "golden")) {
    if (item.path().filename() != "input.jsonl") continue;
    // What pi writes: a v3 header, then one JSON object with an id per line.
    const std::vector<std::string> lines = lines_of(read_file(item.path()));
    if (lines.size() < 2 || lines[0].rfind(R"({"type":"session")", 0) != 0 ||
        lines[0].find(R"("version":3)") == std::string::npos)
      continue;
    // ... and every parent is in the file (X6 joins what is not).
    bool as_pi_writes = true;
    std::set<std::string> ids, parents;
    for (std::size_t i = 1; i < lines.size() && as_pi_writes; ++i) {
      rapidjson::Document entry;
      entry.Parse(lines[i].c_str(), lines[i].size());
      as_pi_writes = !entry.HasParseError() && entry.IsObject() && entry.HasMember("id") && entry["id"].IsString() &&
                     entry["id"].GetStringLength() > 0;
      if (!as_pi_writes) break;
      as_pi_writes = ids.insert(entry["id"].GetString()).second;  // X3 keeps the first of a repeated id
      if (entry.HasMember("parentId") && entry["parentId"].IsString()) parents.insert(entry["parentId"].GetString());
    }
    for (const std::string& parent : parents) as_pi_writes &= ids.count(parent) > 0;
    if (!as_pi_writes) continue;
    if (!hydrate(false, read_file(item.path())).ok) continue;
    found.push_back(item.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

TEST(RawThread, RawEntriesHydrateAsTheSessionTheyCameFrom) {
  const std::vector<fs::path> sessions = v3_sessions();
  ASSERT_GE(sessions.size(), 20u) << "too few golden sessions to compare";
  std::cout << "comparing " << sessions.size() << " golden sessions\n";
  for (const fs::path& path : sessions) {
    SCOPED_TRACE(path.string());
    const std::string session = read_file(path);
    const Hydrated direct = hydrate(false, session);
    const std::vector<std::string> lines = lines_of(session);
    std::vector<std::string> entries;
    for (std::size_t i = 0; i < lines.size(); ++i) entries.push_back(raw_entry(i, lines[i]));
    const Hydrated from_raw = hydrate(true, export_of(entries));
    ASSERT_TRUE(from_raw.ok);
    EXPECT_EQ(from_raw.text, direct.text);
    // The same from a snapshot of the first half and the rest as entries, overlapping by one.
    const std::size_t half = lines.size() / 2;
    std::string first_half;
    for (std::size_t i = 0; i < half; ++i) first_half += lines[i] + "\n";
    std::vector<std::string> mixed = {R"({"id":"snap","kind":"pi.snapshot","data":{"jsonl":)" + json_quote(first_half) +
                                      "}}"};
    for (std::size_t i = half == 0 ? 0 : half - 1; i < lines.size(); ++i) mixed.push_back(raw_entry(i, lines[i]));
    const Hydrated from_snapshot = hydrate(true, export_of(mixed));
    ASSERT_TRUE(from_snapshot.ok);
    EXPECT_EQ(from_snapshot.text, direct.text);
  }
}

TEST(RawThread, OnlyAKindSendsAnExportToTheRawPath) {
  // A value that merely names a raw kind changes nothing: the converter converts the export.
  const std::string example = read_file(fs::path(PIHYDRATE_SOURCE_DIR) / "examples" / "thread.json");
  const std::size_t at = example.find(R"("kind": "chat")");
  ASSERT_NE(at, std::string::npos);
  std::string named = example, other = example;
  named.insert(at, R"("note": "pi.entry", )");
  other.insert(at, R"("note": "pi.other", )");
  const Hydrated with_name = hydrate(true, named), without = hydrate(true, other);
  ASSERT_TRUE(with_name.ok);
  ASSERT_TRUE(without.ok);
  EXPECT_EQ(with_name.text, without.text);
  EXPECT_EQ(with_name.diagnostics.size(), without.diagnostics.size());
  // The kind itself makes the entry a raw one, which must carry its line.
  std::string raw = example;
  raw.replace(raw.find(R"("kind": "chat")"), 14, R"("kind": "pi.entry")");
  ThreadOptions options;
  const ConvertedThread converted = convert_thread_export(raw, "t.json", options);
  ASSERT_FALSE(converted.ok());
  EXPECT_NE(converted.diagnostics[0].message.find("a pi.entry carries data.line"), std::string::npos);
}

TEST(RawThread, LossyEntriesTheRawOnesCoverAreDropped) {
  const std::string user =
      R"({"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"Hello there","timestamp":1767225600000}})";
  const std::string chat = R"({"id":"c1","kind":"chat","role":"user","text":"Hello   there"})";
  const std::string pi_user =
      R"({"id":"p1","kind":"pi.user","data":{"message":{"role":"user","content":"Hello there","timestamp":1767225600000}}})";
  const Hydrated both = hydrate(true, export_of({chat, pi_user, raw_entry(0, user)}));
  ASSERT_TRUE(both.ok);
  EXPECT_EQ(lines_of(both.text).size(), 2u) << both.text;  // header and the one user message
  // Another text is not covered: it is rebuilt by the lossy rules, and the report says so.
  const std::string other = R"({"id":"c2","kind":"chat","role":"user","text":"Something else"})";
  const Hydrated gap = hydrate(true, export_of({raw_entry(0, user), other}));
  ASSERT_TRUE(gap.ok);
  EXPECT_EQ(lines_of(gap.text).size(), 3u) << gap.text;
  bool reported = false;
  for (const Diagnostic& d : gap.diagnostics)
    reported |= d.message.find("rebuilt by the lossy rules") != std::string::npos;
  EXPECT_TRUE(reported);
}

TEST(RawThread, ARawEntryWithAnUnknownParentHangsFromThePreviousEntry) {
  const std::string first =
      R"({"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"one","timestamp":1767225600000}})";
  const std::string orphan =
      R"({"type":"message","id":"a2","parentId":"gone","timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"two","timestamp":1767225601000}})";
  const Hydrated h = hydrate(true, export_of({raw_entry(0, first), raw_entry(1, orphan)}));
  ASSERT_TRUE(h.ok);
  EXPECT_NE(h.text.find(R"("id":"a2","parentId":"a1")"), std::string::npos) << h.text;
}

TEST(RawThread, ABrokenRawLineIsAnErrorAtItsEntry) {
  const Hydrated h = hydrate(true, export_of({raw_entry(0, "{\"type\":")}));
  EXPECT_FALSE(h.ok);
  ASSERT_FALSE(h.diagnostics.empty());
  EXPECT_EQ(h.diagnostics[0].code, Code::kThreadExportInvalid);
  EXPECT_EQ(h.diagnostics[0].line, 1u);
  EXPECT_NE(h.diagnostics[0].message.find("entries[0].data.line"), std::string::npos) << h.diagnostics[0].message;
}

}  // namespace
}  // namespace pihydrate
