// The validator on small sessions: levels, positions and which rule families run.
#include "pihydrate/validator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace pihydrate {
namespace {

FileReport run(const std::string& text, ValidateOptions o = {}) {
  auto source = make_memory_source(text);
  return validate_source(*source, "t.jsonl", o);
}

bool has(const FileReport& r, Code code) {
  return std::any_of(r.diagnostics.begin(), r.diagnostics.end(), [&](const Diagnostic& d) { return d.code == code; });
}

const std::string kGood =
    R"({"type":"session","version":3,"id":"0198a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"})"
    "\n"
    R"({"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1767225601000}})"
    "\n";

TEST(Validator, CleanFileIsLoadableAndResumable) {
  FileReport r = run(kGood, [] {
    ValidateOptions o;
    o.level = Level::kLint;
    return o;
  }());
  EXPECT_TRUE(r.loadable);
  EXPECT_TRUE(r.resumable);
  EXPECT_EQ(r.errors, 0u);
  EXPECT_EQ(r.warnings, 0u) << (r.diagnostics.empty() ? "" : r.diagnostics[0].message);
}

TEST(Validator, MissingCwdIsALoadErrorUnlessSkipped) {
  std::string text = kGood;
  text.replace(text.find("\"/tmp\""), 6, "\"/no/such/dir/for/pi-hydrate\"");
  FileReport r = run(text);
  EXPECT_FALSE(r.loadable);
  ASSERT_TRUE(has(r, Code::kCwdMissing));
  ValidateOptions o;
  o.check_cwd = false;
  EXPECT_TRUE(run(text, o).loadable);
}

TEST(Validator, DiagnosticCarriesExactPosition) {
  std::string text = kGood + "{\"type\":\"message\",\"id\":\"x\",tru}\n";
  FileReport r = run(text);
  ASSERT_TRUE(has(r, Code::kMalformedLine));
  const Diagnostic& d = *std::find_if(r.diagnostics.begin(), r.diagnostics.end(),
                                      [](const Diagnostic& x) { return x.code == Code::kMalformedLine; });
  EXPECT_EQ(d.line, 3u);
  EXPECT_EQ(d.column, 28u);
  EXPECT_EQ(d.severity, Severity::kError);
  EXPECT_TRUE(r.loadable);
  EXPECT_FALSE(r.resumable);
}

// Without the content rules only the file and tree rules report: the same
// findings of theirs, none about payloads or tool pairing (hydration's look
// at its input keeps only file and tree findings).
TEST(Validator, WithoutContentRulesOnlyFileAndTreeRulesReport) {
  const std::string text =
      kGood + "{bad\n" +
      R"({"type":"message","id":"a1b2c3d4","parentId":"zzzzzzzz","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"toolResult","toolCallId":"nope","content":[],"timestamp":1767225602000}})"
      "\n";
  ValidateOptions all;
  all.level = Level::kLint;
  ValidateOptions file_and_tree = all;
  file_and_tree.content_rules = false;
  const FileReport full = run(text, all), part = run(text, file_and_tree);
  ASSERT_TRUE(has(full, Code::kMalformedLine));
  ASSERT_TRUE(has(full, Code::kDuplicateId));
  ASSERT_TRUE(has(full, Code::kOrphanToolResult));
  auto describe = [](const FileReport& r, bool content) {
    std::vector<std::string> out;
    for (const Diagnostic& d : r.diagnostics) {
      const int code = static_cast<int>(d.code);
      if ((code >= 300 && code < 500) == content)  // PH3xx payloads, PH4xx tool pairing: message rules
        out.push_back(code_name(d.code) + " " + std::to_string(d.line) + ":" + std::to_string(d.column) + " " +
                      d.message);
    }
    return out;
  };
  EXPECT_FALSE(describe(full, true).empty());
  EXPECT_TRUE(describe(part, true).empty());
  // What the file and tree rules found is found alike (lint findings may go).
  for (const std::string& finding : describe(part, false)) {
    const auto in_full = describe(full, false);
    EXPECT_NE(std::find(in_full.begin(), in_full.end(), finding), in_full.end()) << finding;
  }
  EXPECT_TRUE(has(part, Code::kMalformedLine));
  EXPECT_TRUE(has(part, Code::kDuplicateId));
  EXPECT_TRUE(has(part, Code::kDanglingParent));
  EXPECT_FALSE(has(part, Code::kOrphanToolResult));
}

TEST(Validator, LevelFiltersOutput) {
  std::string text = kGood + "{bad\n";
  ValidateOptions o;
  o.level = Level::kLoad;
  FileReport r = run(text, o);
  EXPECT_TRUE(r.diagnostics.empty());
  EXPECT_FALSE(r.resumable);  // the verdicts do not depend on the level
}

// The timestamps' text is kept only for the lint rules, which read it.
TEST(Validator, TimestampsAreKeptOnlyWhenLintRulesRun) {
  ValidateOptions lint;
  lint.level = Level::kLint;
  EXPECT_TRUE(index_options_for(lint).keep_timestamps);
  EXPECT_FALSE(index_options_for(ValidateOptions{}).keep_timestamps);

  IndexOptions without;
  without.keep_timestamps = false;
  auto source = make_memory_source(kGood);
  const SessionIndex index = build_session_index(*source, "t.jsonl", without);
  const Entry& message = index.entries[1];
  EXPECT_EQ(message.timestamp.kind, JsonKind::kString);  // kind and column stay
  EXPECT_GT(message.timestamp.column, 0u);
  EXPECT_TRUE(message.timestamp.text().empty());
  EXPECT_EQ(message.message_timestamp.kind, JsonKind::kNumber);
  EXPECT_TRUE(message.message_timestamp.text().empty());
  EXPECT_EQ(message.id.text(), "a1b2c3d4");
  EXPECT_FALSE(index.timestamps_kept);

  // Below lint the index serves; at lint it would give wrong findings, so it is refused.
  EXPECT_TRUE(validate_index(index, ValidateOptions{}).resumable);
  EXPECT_THROW(validate_index(index, lint), std::logic_error);
  // A backwards timestamp is found at lint level from a file (the text is kept then).
  const std::string backwards =
      kGood +
      R"({"type":"message","id":"b1b2c3d4","parentId":"a1b2c3d4","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"again","timestamp":1767225601000}})"
      "\n";
  EXPECT_TRUE(has(run(backwards, lint), Code::kTimestampBackwards));
  EXPECT_FALSE(has(run(backwards), Code::kTimestampBackwards));
}

}  // namespace
}  // namespace pihydrate
