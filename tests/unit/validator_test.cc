#include "pihydrate/validator.h"

#include <gtest/gtest.h>

#include <algorithm>

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
  FileReport r = run(kGood, [] { ValidateOptions o; o.level = Level::kLint; return o; }());
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

TEST(Validator, LevelFiltersOutput) {
  std::string text = kGood + "{bad\n";
  ValidateOptions o;
  o.level = Level::kLoad;
  FileReport r = run(text, o);
  EXPECT_TRUE(r.diagnostics.empty());
  EXPECT_FALSE(r.resumable);  // the verdicts do not depend on the level
}

}  // namespace
}  // namespace pihydrate
