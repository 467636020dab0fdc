// The thread converter's fast path: where pages are released, and lines built from what it read once.
#include "pihydrate/hydrate.h"

#include <unistd.h>

#include <algorithm>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <set>

#include "common/hydrate_helpers.h"
#include "common/index_summary.h"
#include "common/recording_residency.h"
#include "core/json_spans.h"
#include "core/mapped_file.h"
#include "hydrate/plan.h"
#include "pihydrate/errors.h"
#include "pihydrate/output_file.h"
#include "pihydrate/spool.h"
#include "pihydrate/validator.h"
#include "readers/page_window.h"
#include "readers/thread_document.h"
#include "readers/thread_export.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/stat.h>

#include <atomic>
#include <sstream>

namespace pihydrate {
namespace {

using test_support::hydrate;
using test_support::RecordingResidency;
using test_support::Result;

std::string golden_thread() {
  std::ifstream in(std::string(PIHYDRATE_SOURCE_DIR) + "/tests/golden/thread/example/input.json", std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A message naming toolCallId twice: the last one counts, as with
// JSON.parse. A compaction keeping the result must keep the call it answers
// too: its anchor tells which id was read.
TEST(ThreadLinesTest, AResultsToolCallIdIsTheLastOneNamed) {
  auto thread = [](const std::string& call_ids) {
    return std::string(R"({"format":"thread-export","version":1,"thread":{"id":"t"},"entries":[)") +
           R"({"id":"u","kind":"chat","role":"user","text":"q","ts":"2026-11-20T14:02:10.000Z"},)"
           R"({"id":"a1","kind":"pi.assistant","ts":"2026-11-20T14:02:11.000Z","data":{"message":{"role":"assistant",)"
           R"("content":[{"type":"toolCall","id":"c1","name":"read","arguments":{}}],"usage":{"input":1,"cost":{"total":0}},)"
           R"("stopReason":"toolUse","timestamp":1}}},)"
           R"({"id":"r1","kind":"pi.tool_result","ts":"2026-11-20T14:02:12.000Z","data":{"message":{"role":"toolResult",)" +
           call_ids +
           R"(,"toolName":"read","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":2}}},)"
           R"({"id":"k","kind":"pi.compaction","ts":"2026-11-20T14:02:13.000Z","data":{"firstKeptRef":"r1",)"
           R"("result":{"summary":"S","tokensBefore":5}}}]})";
  };
  auto kept_index = [](const ConvertedThread& t) {
    const std::size_t at = t.session.find("\"firstKeptEntryIndex\":");
    return at == std::string::npos ? std::string("none") : t.session.substr(at + 22, 1);
  };
  std::string plain = thread(R"("toolCallId":"c1")");
  std::string last_counts = thread(R"("toolCallId":"other","toolCallId":"c1")");
  std::string first_would_count = thread(R"("toolCallId":"c1","toolCallId":"other")");
  const ConvertedThread a = convert_thread_export(plain, "t.json", ThreadOptions{});
  const ConvertedThread b = convert_thread_export(last_counts, "t.json", ThreadOptions{});
  const ConvertedThread c = convert_thread_export(first_would_count, "t.json", ThreadOptions{});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(kept_index(a), "2");  // header 0, the user turn 1, a1 2: the window starts at the call
  EXPECT_EQ(kept_index(b), "2");
  EXPECT_EQ(kept_index(c), "3");  // "other" answers no call: the window starts at the result
}

// A content block's type is read unescaped: an empty text block whose type
// is spelled with an escape is dropped like any other, and a tool call's
// type so spelled still counts.
TEST(ThreadLinesTest, AContentBlocksTypeIsReadUnescaped) {
  std::string text =
      std::string(R"({"format":"thread-export","version":1,"thread":{"id":"t"},"entries":[)") +
      R"({"id":"u","kind":"chat","role":"user","text":"q","ts":"2026-11-20T14:02:10.000Z"},)"
      R"({"id":"a1","kind":"pi.assistant","ts":"2026-11-20T14:02:11.000Z","data":{"message":{"role":"assistant",)"
      R"("content":[{"type":"t\u0065xt","text":""},{"type":"tool\u0043all","id":"c1","name":"read","arguments":{}}],)"
      R"("api":"x-api","provider":"p1","model":"m1","usage":{"input":1,"cost":{"total":0}},"timestamp":1}}}]})";
  const ConvertedThread t = convert_thread_export(text, "t.json", ThreadOptions{});
  ASSERT_TRUE(t.ok());
  // No stopReason: settled from the tool call.
  EXPECT_NE(t.session.find(R"("stopReason":"toolUse")"), std::string::npos) << t.session;
  // The blank text block is left out when the session is hydrated (as any session's is).
  const Result r = hydrate(t.session);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.report.repairs.at("dropped-empty-text-block"), 1u);
  std::string written;
  for (const std::string& line : r.lines) written += line + "\n";
  EXPECT_NE(written.find(R"("content":[{"type":"tool\u0043all","id":"c1")"), std::string::npos) << written;
}

// A pi.assistant naming content twice: the last counts, as with JSON.parse
// (here an array, so nothing is wrapped). A chat assistant turn and the
// trailer take the model of the last pi.assistant before them, read only
// when asked for.
TEST(ThreadLinesTest, AnAssistantsContentIsTheLastOneNamedAndItsModelIsReadWhenAsked) {
  auto thread = [](const std::string& contents) {
    return std::string(R"({"format":"thread-export","version":1,"thread":{"id":"t"},"entries":[)") +
           R"({"id":"u","kind":"chat","role":"user","text":"q","ts":"2026-11-20T14:02:10.000Z"},)"
           R"({"id":"a1","kind":"pi.assistant","ts":"2026-11-20T14:02:11.000Z","data":{"message":{"role":"assistant",)" +
           contents +
           R"(,"api":"x-api","provider":"p1","model":"m1","usage":{"input":1,"cost":{"total":0}},)"
           R"("stopReason":"stop","timestamp":1}}},)"
           R"({"id":"c","kind":"chat","role":"assistant","text":"echo-less","ts":"2026-11-20T14:02:12.000Z"}]})";
  };
  std::string plain = thread(R"("content":[{"type":"text","text":"hi"}])");
  std::string twice = thread(R"("content":"first","content":[{"type":"text","text":"hi"}])");
  const ConvertedThread a = convert_thread_export(plain, "t.json", ThreadOptions{});
  const ConvertedThread b = convert_thread_export(twice, "t.json", ThreadOptions{});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.repairs.count("wrapped-string-content"), 0u);
  EXPECT_EQ(b.repairs.count("wrapped-string-content"), 0u);
  EXPECT_NE(b.session.find(R"("content":"first","content":[{"type":"text","text":"hi"}])"), std::string::npos);
  for (const ConvertedThread* t : {&a, &b}) {
    // The chat assistant turn (no pi.assistant mirrors it) and the trailer's model_change.
    EXPECT_NE(t->session.find(R"("text":"echo-less"}],"api":"x-api","provider":"p1","model":"m1")"), std::string::npos)
        << t->session;
    EXPECT_NE(t->session.find(R"("type":"model_change")"), std::string::npos);
    EXPECT_NE(t->session.find(R"("provider":"p1","modelId":"m1")"), std::string::npos) << t->session;
  }
}

// Telling a residency what can leave memory changes nothing in the result;
// the converter reports its in-place rewrite of a lone surrogate, and lets
// go of the whole export at least once.
TEST(ThreadResidencyTest, ConversionIsTheSameAndRewritesAreReported) {
  std::string original = golden_thread();
  ASSERT_FALSE(original.empty());
  const std::size_t text = original.find("\"text\": \"");
  ASSERT_NE(text, std::string::npos);
  original.insert(text + 9, "\\ud800");  // a lone high surrogate at the start of a text
  std::string plain = original;
  ConvertedThread expected = convert_thread_export(plain, "t.json", ThreadOptions{});
  ASSERT_TRUE(expected.ok());

  std::string bytes = original;
  RecordingResidency residency;
  ThreadOptions options;
  options.residency = &residency;
  ConvertedThread converted = convert_thread_export(bytes, "t.json", options);
  EXPECT_EQ(converted.session, expected.session);
  EXPECT_EQ(bytes, plain);  // the same in-place edits
  ASSERT_EQ(residency.rewrites.size(), 1u);
  EXPECT_EQ(residency.rewrites[0].first, text + 9 + 2);
  EXPECT_EQ(bytes.substr(residency.rewrites[0].first, 4), "FFFD");
  EXPECT_NE(std::find(residency.released.begin(), residency.released.end(), bytes.size()), residency.released.end());
}

}  // namespace
}  // namespace pihydrate
