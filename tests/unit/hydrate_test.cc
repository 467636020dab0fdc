// Session hydration (hydrate_session) on small sessions, and every golden thread export hydrated.
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
using test_support::joined;
using test_support::Result;
using test_support::StringSink;

const std::string kHeader =
    R"({"type":"session","version":3,"id":"s-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/old"})";

std::string user(const char* id, const char* parent, const char* text) {
  std::string p = parent ? std::string("\"") + parent + "\"" : "null";
  return std::string(R"({"type":"message","id":")") + id + R"(","parentId":)" + p +
         R"(,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":")" + text +
         R"(","timestamp":1767225601000}})";
}

std::string assistant_call(const char* id, const char* parent, const char* call_id) {
  return std::string(R"({"type":"message","id":")") + id + R"(","parentId":")" + parent +
         R"(","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":")" +
         call_id +
         R"(","name":"bash","arguments":{"n":0.1}}],"usage":{"cost":{"total":1e-7}},"stopReason":"toolUse","timestamp":1767225602000}})";
}

std::string result(const char* id, const char* parent, const char* call_id) {
  return std::string(R"({"type":"message","id":")") + id + R"(","parentId":")" + parent +
         R"(","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":")" + call_id +
         R"(","toolName":"bash","content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":1767225603000}})";
}

// Pass 2 reads lines again by offset into a scratch string it reuses (never
// shrunk, so a short line after a long one reads only its own bytes); a file
// that ends before a line is an input that shrank, not a failing disk.
TEST(FdLineSource, ReadsByOffsetAndReportsAShortFileAsShrunk) {
  FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  const std::string text = "first line\nsecond, longer line\nthird\n";
  ASSERT_EQ(std::fwrite(text.data(), 1, text.size(), file), text.size());
  std::fflush(file);
  auto source = make_fd_line_source(fileno(file), "f.jsonl");
  std::string scratch;
  EXPECT_EQ(source->read(11, 19, scratch), "second, longer line");
  EXPECT_EQ(source->read(31, 5, scratch), "third");
  EXPECT_EQ(source->read(0, 5, scratch), "first");
  EXPECT_THROW(source->read(31, 10, scratch), InputShrankError);
  std::fclose(file);
}

TEST(Hydrate, HeaderGetsTheNewCwdAndEntriesAreCopiedByteForByte) {
  std::string text = kHeader + "\n" + user("u1", nullptr, "hi") + "\n" + assistant_call("a1", "u1", "c1") + "\n" +
                     result("r1", "a1", "c1") + "\n";
  Result r = hydrate(text);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.lines.size(), 4u);
  EXPECT_EQ(r.lines[0],
            R"({"type":"session","version":3,"id":"s-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/sandbox"})");
  EXPECT_EQ(r.lines[1], user("u1", nullptr, "hi"));
  EXPECT_EQ(r.lines[2], assistant_call("a1", "u1", "c1"));  // 0.1 and 1e-7 untouched
  EXPECT_EQ(r.lines[3], result("r1", "a1", "c1"));
}

// A big session is written in batches of about a MiB, rendered by two
// threads and written in turn: the lines come out in plan order, each
// chained to the one before. A sink that fails on any write (the first
// thread's or the second's) makes the hydration throw, without hanging.
class FailingSink : public LineSink {
 public:
  explicit FailingSink(int fail_at) : fail_at_(fail_at) {}
  void write_line(std::string_view) override { fail_if_due(); }
  void write_lines(std::string_view) override { fail_if_due(); }

 private:
  void fail_if_due() {
    if (++writes_ >= fail_at_) throw IoError("cannot write the output: no space left on device");
  }
  int fail_at_;

 public:
  std::atomic<int> writes_{0};  // the failing one included: nothing is written after it
};

TEST(Hydrate, BatchesOfABigSessionComeOutInOrderAndNothingIsWrittenAfterAFailedWrite) {
  std::string text = kHeader + "\n";
  const std::string padding(2000, 'p');
  std::string parent = "";
  constexpr int kEntries = 4000;  // about 8 MiB: eight batches
  for (int i = 0; i < kEntries; ++i) {
    const std::string id = "u" + std::to_string(i);
    text +=
        user(id.c_str(), parent.empty() ? nullptr : parent.c_str(), (std::to_string(i) + "-" + padding).c_str()) + "\n";
    parent = id;
  }
  const Result r = hydrate(text);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.lines.size(), kEntries + 1u);
  std::string previous_id;
  for (int i = 0; i < kEntries; ++i) {
    rapidjson::Document d;
    d.Parse(r.lines[static_cast<std::size_t>(i) + 1].c_str());
    ASSERT_FALSE(d.HasParseError()) << i;
    EXPECT_EQ(std::string(d["message"]["content"].GetString()), std::to_string(i) + "-" + padding) << "line " << i;
    if (i > 0) {
      EXPECT_EQ(std::string(d["parentId"].GetString()), previous_id) << i;
    }
    previous_id = d["id"].GetString();
  }
  for (int fail_at : {1, 2, 3, 4, 6, 9}) {
    auto source = make_memory_source(text);
    SessionIndex index = build_session_index(*source, "in.jsonl");
    auto lines = make_memory_line_source(text);
    HydrateOptions o;
    o.cwd = "/sandbox";
    FailingSink sink(fail_at);
    HydrateReport report;
    EXPECT_THROW(hydrate_session(index, *lines, o, sink, report), IoError) << "failing write " << fail_at;
    EXPECT_EQ(sink.writes_.load(), fail_at) << "a write after the failed one";
  }
}

TEST(Hydrate, AbandonedBranchIsLeftOut) {
  std::string text = kHeader + "\n" + user("u1", nullptr, "q") + "\n" + user("x1", "u1", "abandoned") + "\n" +
                     user("u2", "u1", "kept") + "\n";
  Result r = hydrate(text);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.lines.size(), 3u);
  EXPECT_NE(r.lines[2].find("kept"), std::string::npos);
  EXPECT_NE(r.lines[2].find(R"("parentId":"u1")"), std::string::npos);
  EXPECT_EQ(r.report.repairs["dropped-off-branch"], 1u);
}

TEST(Hydrate, MissingResultGetsAnErrorResultAndOrphanIsDropped) {
  std::string text = kHeader + "\n" + user("u1", nullptr, "q") + "\n" + assistant_call("a1", "u1", "c1") + "\n" +
                     user("u2", "a1", "interrupt") + "\n" + result("r9", "u2", "c9") + "\n";
  Result r = hydrate(text);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.lines.size(), 5u);  // header, u1, a1, synthetic result, u2
  EXPECT_NE(r.lines[3].find(R"("toolCallId":"c1")"), std::string::npos);
  EXPECT_NE(r.lines[3].find(R"("isError":true)"), std::string::npos);
  EXPECT_NE(r.lines[4].find("interrupt"), std::string::npos);
  EXPECT_EQ(r.report.repairs["synthetic-result-for-missing"], 1u);
  EXPECT_EQ(r.report.repairs["dropped-orphan-result"], 1u);
}

std::string message_entry(const char* id, const char* parent, const std::string& message) {
  std::string p = parent ? std::string("\"") + parent + "\"" : "null";
  return std::string(R"({"type":"message","id":")") + id + R"(","parentId":)" + p +
         R"(,"timestamp":"2026-01-01T00:00:01.000Z","message":)" + message + "}";
}

const std::string kAssistantTail =
    R"("api":"x","provider":"p","model":"m","usage":{"cost":{"total":0}},"stopReason":"stop","timestamp":2})";

TEST(Hydrate, AUserMessageWithoutContentIsLeftOutAndAUserMessageStillOpens) {
  // pi 0.78 stops on it (reading 'map'); pi 1.5 sends nothing for it, so the
  // request would start with the assistant message.
  std::string text =
      kHeader + "\n" + message_entry("u1", nullptr, R"({"role":"user","content":null,"timestamp":1})") + "\n" +
      message_entry("a1", "u1", R"({"role":"assistant","content":[{"type":"text","text":"hi"}],)" + kAssistantTail) +
      "\n";
  Result r = hydrate(text);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.lines.size(), 3u);  // header, the added user message, a1
  EXPECT_NE(r.lines[1].find(R"("parentId":null,)"), std::string::npos);
  EXPECT_NE(r.lines[1].find(R"("role":"user","content":[{"type":"text","text":"No user message was recorded)"),
            std::string::npos);
  EXPECT_NE(r.lines[2].find(R"("id":"a1")"), std::string::npos);
  EXPECT_EQ(r.report.repairs["dropped-empty-user-message"], 1u);
  EXPECT_EQ(r.report.repairs["added-user-message-at-start"], 1u);
}

TEST(Hydrate, RenamedToolCallIdsEachNameOneCallAndTakeNoIdInUse) {
  // pi-ai sends an anthropic-messages assistant's ids unchanged when the model stays.
  auto calls = [](const char* id, const char* parent, const char* call_id) {
    return message_entry(id, parent,
                         std::string(R"({"role":"assistant","content":[{"type":"toolCall","id":")") + call_id +
                             R"(","name":"bash","arguments":{}}],"api":"anthropic-messages",)"
                             R"("provider":"anthropic","model":"m","usage":{"cost":{"total":0}},)"
                             R"("stopReason":"toolUse","timestamp":2})");
  };
  std::string text = kHeader + "\n" + user("u1", nullptr, "q") + "\n" + calls("a1", "u1", "x|1") + "\n" +
                     result("r1", "a1", "x|1") + "\n" + calls("a2", "r1", "x_1") + "\n" + result("r2", "a2", "x_1") +
                     "\n" + calls("a3", "r2", "x_1") + "\n" + result("r3", "a3", "x_1") + "\n";
  Result r = hydrate(text);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.lines.size(), 8u);
  EXPECT_NE(r.lines[2].find(R"("id":"x_1_2")"), std::string::npos) << r.lines[2];  // "x_1" is a later call's
  EXPECT_NE(r.lines[3].find(R"("toolCallId":"x_1_2")"), std::string::npos) << r.lines[3];
  EXPECT_NE(r.lines[4].find(R"("id":"x_1")"), std::string::npos) << r.lines[4];
  EXPECT_NE(r.lines[5].find(R"("toolCallId":"x_1")"), std::string::npos) << r.lines[5];
  EXPECT_NE(r.lines[6].find(R"("id":"x_1_3")"), std::string::npos) << r.lines[6];
  EXPECT_NE(r.lines[7].find(R"("toolCallId":"x_1_3")"), std::string::npos) << r.lines[7];
  EXPECT_EQ(r.report.repairs["renamed-tool-call-id"], 2u);
}

// What the repairs promise (docs/hydrate.md): neither pi version finds
// anything in `written` that a provider would reject.
void expect_nothing_a_provider_rejects(const std::string& written, const std::string& what) {
  const std::set<Code> repaired = {Code::kUsageMissing,   Code::kContentNotArray,  Code::kPendingStopReason,
                                   Code::kBlankTextBlock, Code::kEmptyMessage,     Code::kFirstMessageNotUser,
                                   Code::kBadToolCallId,  Code::kOrphanToolResult, Code::kMessageBetweenCallAndResult};
  for (PiVersion version : {PiVersion::k0_78, PiVersion::k1_5}) {
    ValidateOptions vo;
    vo.pi_version = version;
    vo.check_cwd = false;
    auto source = make_memory_source(written);
    const FileReport report = validate_source(*source, "out.jsonl", vo);
    EXPECT_TRUE(report.resumable) << what;
    for (const Diagnostic& d : report.diagnostics) EXPECT_FALSE(repaired.count(d.code)) << what << ": " << d.message;
  }
}

TEST(Hydrate, ACostThatIsNotAnObjectIsReplacedNotShadowed) {
  // JSON.parse keeps the last of two "cost" members: a zeroed cost put
  // before "cost":null would lose to it, and each hydration would add one.
  for (const char* cost : {"null", "0", "\"x\"", "[]"}) {
    const std::string usage = std::string(R"({"input":1,"cost":)") + cost + R"(,"totalTokens":1})";
    std::string text = kHeader + "\n" + user("u1", nullptr, "q") + "\n" +
                       message_entry("a1", "u1",
                                     R"({"role":"assistant","content":[{"type":"text","text":"hi"}],)"
                                     R"("api":"x","provider":"p","model":"m","usage":)" +
                                         usage + R"(,"stopReason":"stop","timestamp":2})") +
                       "\n";
    Result r = hydrate(text);
    ASSERT_TRUE(r.ok) << cost;
    ASSERT_EQ(r.lines.size(), 3u) << cost;
    EXPECT_NE(r.lines[2].find(R"("usage":{"input":1,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,)"
                              R"("total":0},"totalTokens":1})"),
              std::string::npos)
        << r.lines[2];
    EXPECT_EQ(r.lines[2].find("\"cost\"", r.lines[2].find("\"cost\"") + 1), std::string::npos) << r.lines[2];
    EXPECT_EQ(r.report.repairs["filled-missing-usage"], 1u) << cost;
    const std::string written = joined(r.lines);
    expect_nothing_a_provider_rejects(written, cost);
    Result again = hydrate(written);
    ASSERT_TRUE(again.ok) << cost;
    EXPECT_EQ(joined(again.lines), written) << cost;
    EXPECT_TRUE(again.report.repairs.empty()) << cost;
  }
  // An empty usage, or one without cost, gets its cost inserted as before.
  for (const char* usage : {"{}", R"({"input":1})"}) {
    std::string text = kHeader + "\n" + user("u1", nullptr, "q") + "\n" +
                       message_entry("a1", "u1",
                                     R"({"role":"assistant","content":[{"type":"text","text":"hi"}],)"
                                     R"("api":"x","provider":"p","model":"m","usage":)" +
                                         std::string(usage) + R"(,"stopReason":"stop","timestamp":2})") +
                       "\n";
    Result r = hydrate(text);
    ASSERT_TRUE(r.ok) << usage;
    const std::string cost = R"("cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0})";
    EXPECT_NE(r.lines[2].find(std::string(R"("usage":{)") + cost + (usage[1] == '}' ? "}" : R"(,"input":1})")),
              std::string::npos)
        << r.lines[2];
    Result again = hydrate(joined(r.lines));
    EXPECT_EQ(joined(again.lines), joined(r.lines)) << usage;
  }
}

// PH406 and the hydrator ask the same question (tool_call_id_problem): an id
// is renamed exactly where the validator reports it.
TEST(Hydrate, ToolCallIdsAreRenamedOnlyWhereAnthropicWouldGetThemOrTheyRepeat) {
  struct Case {
    const char* api;  // nullptr: no api member
    const char* id;   // nullptr: 70 letters
    bool renamed;
  };
  const Case cases[] = {
      {"openai-responses", "call_Ab12|fc_68a1f0c2d4e5b6a7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3", false},
      {"openai-codex-responses", "call_Ab12|fc_1", false},
      {"azure-openai-responses", "call_Ab12|fc_1", false},
      {"openai-completions", "functions.read:0", false},
      {"google-generative-ai", nullptr, false},
      {"anthropic-messages", "call_Ab12|fc_1", true},
      {nullptr, "call_Ab12|fc_1", true},
      {"openai-responses", "", true},
      {"anthropic-messages", "toolu_01", false},
  };
  const std::string long_id(70, 'a');
  for (const Case& c : cases) {
    const std::string id = c.id ? std::string(c.id) : long_id;
    const std::string api = c.api ? std::string(R"("api":")") + c.api + R"(",)" : std::string();
    std::string text =
        kHeader + "\n" + user("u1", nullptr, "q") + "\n" +
        message_entry(
            "a1", "u1",
            R"({"role":"assistant","content":[{"type":"toolCall","id":")" + id +
                R"(","name":"bash","arguments":{}}],)" + api +
                R"("provider":"p","model":"m","usage":{"cost":{"total":0}},"stopReason":"toolUse","timestamp":2})") +
        "\n" + result("r1", "a1", id.c_str()) + "\n";
    Result r = hydrate(text);
    ASSERT_TRUE(r.ok) << id;
    ASSERT_EQ(r.lines.size(), 4u) << id;
    const std::string what = std::string(c.api ? c.api : "(no api)") + " " + id;
    EXPECT_EQ(r.lines[2].find("\"id\":" + std::string("\"") + id + "\"") == std::string::npos, c.renamed) << what;
    EXPECT_EQ(r.report.repairs["renamed-tool-call-id"], c.renamed ? 1u : 0u) << what;
    ValidateOptions vo;
    vo.check_cwd = false;
    auto source = make_memory_source(text);
    const FileReport report = validate_source(*source, "in.jsonl", vo);
    const bool ph406 = std::any_of(report.diagnostics.begin(), report.diagnostics.end(),
                                   [](const Diagnostic& d) { return d.code == Code::kBadToolCallId; });
    EXPECT_EQ(ph406, c.renamed) << what;
    const std::string written = joined(r.lines);
    expect_nothing_a_provider_rejects(written, what);
    EXPECT_EQ(joined(hydrate(written).lines), written) << what;
  }
  // A repeated id is renamed whatever the api, and PH406 says so.
  auto responses_call = [](const char* id, const char* parent, const char* call_id) {
    return message_entry(id, parent,
                         std::string(R"({"role":"assistant","content":[{"type":"toolCall","id":")") + call_id +
                             R"(","name":"bash","arguments":{}}],"api":"openai-responses",)"
                             R"("provider":"openai","model":"gpt-5","usage":{"cost":{"total":0}},)"
                             R"("stopReason":"toolUse","timestamp":2})");
  };
  std::string text = kHeader + "\n" + user("u1", nullptr, "q") + "\n" + responses_call("a1", "u1", "call_1|fc_1") +
                     "\n" + result("r1", "a1", "call_1|fc_1") + "\n" + responses_call("a2", "r1", "call_1|fc_1") +
                     "\n" + result("r2", "a2", "call_1|fc_1") + "\n";
  Result r = hydrate(text);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.lines.size(), 6u);
  EXPECT_NE(r.lines[2].find(R"("id":"call_1|fc_1")"), std::string::npos) << r.lines[2];
  // Not "call_1_fc_1": pi-ai sends the first id in that form to Anthropic, which rejects two
  // tool_use blocks with one id.
  EXPECT_NE(r.lines[4].find(R"("id":"call_1_fc_1_2")"), std::string::npos) << r.lines[4];
  EXPECT_NE(r.lines[5].find(R"("toolCallId":"call_1_fc_1_2")"), std::string::npos) << r.lines[5];
  EXPECT_EQ(r.report.repairs["renamed-tool-call-id"], 1u);
  ValidateOptions vo;
  vo.check_cwd = false;
  auto source = make_memory_source(text);
  const FileReport report = validate_source(*source, "in.jsonl", vo);
  EXPECT_EQ(std::count_if(report.diagnostics.begin(), report.diagnostics.end(),
                          [](const Diagnostic& d) { return d.code == Code::kBadToolCallId; }),
            1);
  expect_nothing_a_provider_rejects(joined(r.lines), "repeated");
}

// Every golden session input hydrated as `--session input.jsonl --cwd /tmp
// -o -` does: the output is clean, and hydrating it again changes nothing.
TEST(Hydrate, RepairedOutputsAreCleanForBothPiVersionsAndHydrateToThemselves) {
  namespace fs = std::filesystem;
  std::size_t checked = 0;
  for (const auto& dir : fs::directory_iterator(std::string(PIHYDRATE_SOURCE_DIR) + "/tests/golden/hydrate")) {
    std::ifstream cmd(dir.path() / "cmd");
    std::string command((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
    if (command != "pi-hydrate --session input.jsonl --cwd /tmp -o -\n") continue;  // with no other option
    std::ifstream in(dir.path() / "input.jsonl", std::ios::binary);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Result first = hydrate(text);
    if (!first.ok) continue;  // an err-* case
    const std::string written = joined(first.lines);
    expect_nothing_a_provider_rejects(written, dir.path().string());
    Result second = hydrate(written);
    ASSERT_TRUE(second.ok) << dir.path();
    EXPECT_EQ(joined(second.lines), written) << dir.path();
    EXPECT_TRUE(second.report.repairs.empty()) << dir.path();
    ++checked;
  }
  EXPECT_GT(checked, 10u);
}

TEST(Hydrate, MessageBetweenCallAndResultMovesAfterTheResult) {
  std::string text = kHeader + "\n" + user("u1", nullptr, "q") + "\n" + assistant_call("a1", "u1", "c1") + "\n" +
                     user("u2", "a1", "steer") + "\n" + result("r1", "u2", "c1") + "\n";
  Result r = hydrate(text);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.lines.size(), 5u);
  EXPECT_NE(r.lines[3].find(R"("toolCallId":"c1")"), std::string::npos);
  EXPECT_NE(r.lines[3].find(R"("parentId":"a1")"), std::string::npos);
  EXPECT_NE(r.lines[4].find("steer"), std::string::npos);
  EXPECT_NE(r.lines[4].find(R"("parentId":"r1")"), std::string::npos);
}

TEST(Hydrate, CompactionKeepingAResultKeepsItsCallToo) {
  // The compaction keeps r1 onwards, but r1 answers a1 before it: the kept
  // window starts at a1, or the context would open with a result without its call.
  const std::string compaction =
      R"({"type":"compaction","id":"k1","parentId":"r1","timestamp":"2026-01-01T00:00:04.000Z","summary":"S",)"
      R"("firstKeptEntryId":"r1","tokensBefore":5})";
  std::string text = kHeader + "\n" + user("u1", nullptr, "q") + "\n" + assistant_call("a1", "u1", "c1") + "\n" +
                     result("r1", "a1", "c1") + "\n" + compaction + "\n" + user("u2", "k1", "next") + "\n";
  Result r = hydrate(text);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.lines.size(), 6u);
  EXPECT_NE(r.lines[4].find(R"("firstKeptEntryId":"a1")"), std::string::npos) << r.lines[4];
  EXPECT_EQ(r.report.repairs["compaction-kept-window-starts-at-call"], 1u);
  // A compaction keeping the call itself needs nothing moved.
  std::string keeps_call = text;
  keeps_call.replace(keeps_call.find(R"("firstKeptEntryId":"r1")"), 23, R"("firstKeptEntryId":"a1")");
  Result c = hydrate(keeps_call);
  ASSERT_TRUE(c.ok);
  EXPECT_NE(c.lines[4].find(R"("firstKeptEntryId":"a1")"), std::string::npos) << c.lines[4];
  EXPECT_EQ(c.report.repairs.count("compaction-kept-window-starts-at-call"), 0u);
}

TEST(Hydrate, AnIdWrittenTwiceIsKeptByTheFirstAndTheSecondGetsAFreshOne) {
  // The session name comes along from off the branch (pi reads it from the
  // whole file), but the branch's leaf took its id "k".
  const std::string info =
      R"({"type":"session_info","id":"k","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","name":"N"})";
  std::string text = kHeader + "\n" + user("u1", nullptr, "q") + "\n" + info + "\n" + user("u2", "u1", "r") + "\n" +
                     user("k", "u2", "s") + "\n";
  Result r = hydrate(text);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.lines.size(), 5u);  // header, u1, u2, k, the session name
  EXPECT_NE(r.lines[3].find(R"("id":"k")"), std::string::npos) << r.lines[3];
  ASSERT_NE(r.lines[4].find("session_info"), std::string::npos) << r.lines[4];
  std::set<std::string> ids;
  for (std::size_t i = 1; i < r.lines.size(); ++i) {
    rapidjson::Document d;
    d.Parse(r.lines[i].c_str());
    ASSERT_TRUE(d.IsObject() && d.HasMember("id") && d["id"].IsString()) << r.lines[i];
    EXPECT_TRUE(ids.insert(d["id"].GetString()).second) << "id written twice: " << r.lines[i];
  }
}

TEST(Hydrate, V1EntriesGetDeterministicIdsAndCompactionAnchor) {
  std::string text = std::string(R"({"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/x"})") +
                     "\n" + R"({"type":"message","message":{"role":"user","content":"q1","timestamp":1}})" + "\n" +
                     R"({"type":"message","message":{"role":"hookMessage","content":"h","timestamp":2}})" + "\n" +
                     R"({"type":"compaction","summary":"S","firstKeptEntryIndex":2,"tokensBefore":5})" + "\n";
  Result a = hydrate(text), b = hydrate(text);
  ASSERT_TRUE(a.ok);
  EXPECT_EQ(a.lines, b.lines);
  ASSERT_EQ(a.lines.size(), 4u);
  EXPECT_NE(a.lines[2].find(R"("role":"custom")"), std::string::npos);
  // The compaction keeps the hookMessage entry (index 2, header included).
  std::size_t id_at = a.lines[2].find(R"("id":")");
  std::string kept_id = a.lines[2].substr(id_at + 6, 8);
  EXPECT_NE(a.lines[3].find(R"("firstKeptEntryId":")" + kept_id + "\""), std::string::npos);
  EXPECT_EQ(a.lines[3].find("firstKeptEntryIndex"), std::string::npos);
}

TEST(Hydrate, AnOlderV1CompactionsIndexNamesTheEntryAtThatPosition) {
  // Positions count the header: the older compaction keeps "q2" (2), the
  // latest keeps "q3" (4). Both must name those entries' new ids.
  auto user_v1 = [](const char* text) {
    return std::string(R"({"type":"message","message":{"role":"user","content":")") + text + R"(","timestamp":1}})";
  };
  auto compaction_v1 = [](int kept) {
    return R"({"type":"compaction","summary":"S","firstKeptEntryIndex":)" + std::to_string(kept) +
           R"(,"tokensBefore":5})";
  };
  std::string text = std::string(R"({"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/x"})") +
                     "\n" + user_v1("q1") + "\n" + user_v1("q2") + "\n" + compaction_v1(2) + "\n" + user_v1("q3") +
                     "\n" + compaction_v1(4) + "\n" + user_v1("q4") + "\n";
  Result r = hydrate(text);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.lines.size(), 7u);
  auto id_of = [&](std::size_t line) {
    const std::size_t at = r.lines[line].find(R"("id":")");
    return at == std::string::npos ? std::string() : r.lines[line].substr(at + 6, 8);
  };
  ASSERT_NE(r.lines[2].find("q2"), std::string::npos);
  ASSERT_NE(r.lines[4].find("q3"), std::string::npos);
  EXPECT_NE(r.lines[3].find(R"("firstKeptEntryId":")" + id_of(2) + "\""), std::string::npos) << r.lines[3];
  EXPECT_NE(r.lines[5].find(R"("firstKeptEntryId":")" + id_of(4) + "\""), std::string::npos) << r.lines[5];
}

TEST(Hydrate, NoHeaderIsAnError) {
  Result r = hydrate(user("u1", nullptr, "q") + "\n");
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.lines.empty());
}

// Of the input's long strings, those wholly inside bytes an output line
// copied unchanged are noted where they land in the output.
TEST(CarriedStringsTest, OnlyStringsWhollyInsideTheCopiedBytesAreCarried) {
  LongStrings input;
  input.add(100, 2000);
  input.add(2200, 1100);
  input.add(5000, 1500);
  LongStrings carried;
  note_carried_strings(input, 90, 50, 3000, carried);       // input [90, 3090): the first only
  note_carried_strings(input, 4000, 9000, 1200, carried);   // [4000, 5200): none, the third runs past it
  note_carried_strings(input, 5000, 20000, 1500, carried);  // [5000, 6500): the third, to its last byte
  note_carried_strings(input, 7000, 30000, 5000, carried);  // past every string
  ASSERT_EQ(carried.size(), 2u);
  EXPECT_EQ(carried.begin(0), 60u);
  EXPECT_EQ(carried.length(0), 2000u);
  EXPECT_EQ(carried.begin(1), 20000u);
  EXPECT_EQ(carried.length(1), 1500u);
  const KnownLongStrings known(carried);
  EXPECT_EQ(known.string_end(60), 2060u);
  EXPECT_EQ(known.string_end(100), 0u);  // an input offset is not an output one
  EXPECT_EQ(known.string_end(20000), 21500u);
  EXPECT_FALSE(known.empty());
  EXPECT_TRUE(KnownLongStrings(LongStrings{}).empty());
}

// Hydrating notes the input's long strings that the output copies
// unchanged, whatever edits a policy makes around them, at their output
// offsets: the bytes there are the input string's. Told so, the output's
// verification steps over them and indexes the output as a full scan does.
TEST(CarriedStringsTest, CarriedStringsAreTheInputsAndVerifyTheSame) {
  const std::string long_text(1500, 'q');
  const std::string thinking(2000, 't');
  std::string text = kHeader + "\n";
  text += user("u1", nullptr, long_text.c_str()) + "\n";
  text +=
      R"({"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":")" +
      thinking + R"("},{"type":"toolCall","id":"c1","name":"bash","arguments":{"cmd":")" + long_text +
      R"("}}],"usage":{"cost":{"total":1}},"stopReason":"toolUse","timestamp":2}})"
      "\n";
  text +=
      R"({"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":")" +
      long_text + "\\n\\\"quoted\\\"\xC3\xA9" + long_text +
      R"("}],"isError":false,"timestamp":3}})"
      "\r\n";
  // Every policy carries the user's text. Dropping thinking rebuilds the
  // assistant's content (the call's text goes with it); flattening also
  // rewrites the result.
  const std::size_t expected[] = {4, 2, 1};
  for (int policy = 0; policy < 3; ++policy) {
    HydrateOptions o;
    o.cwd = "/sandbox";
    o.index.record_long_strings = true;
    if (policy == 1) o.thinking = ThinkingPolicy::kDrop;  // edits inside the assistant's message
    if (policy == 2) o.tools = ToolPolicy::kFlatten;
    auto source = make_memory_source(text);
    SessionIndex index = build_session_index(*source, "in.jsonl", o.index);
    ASSERT_EQ(index.long_strings.size(), 4u) << policy;  // the user's, thinking, the call's, the result's
    std::set<std::string> input_strings;
    for (std::size_t k = 0; k < index.long_strings.size(); ++k)
      input_strings.insert(text.substr(index.long_strings.begin(k), index.long_strings.length(k)));
    auto lines = make_memory_line_source(text);
    StringSink sink;
    HydrateReport report;
    ASSERT_TRUE(hydrate_session(index, *lines, o, sink, report)) << policy;
    std::string output;
    for (const std::string& line : sink.lines) output += line + "\n";
    const LongStrings& noted = report.carried;
    ASSERT_EQ(noted.size(), expected[policy]) << policy;
    for (std::size_t k = 0; k < noted.size(); ++k) {
      ASSERT_LE(noted.begin(k) + noted.length(k), output.size()) << policy;
      if (k > 0) {
        EXPECT_GT(noted.begin(k), noted.begin(k - 1)) << policy;
      }
      EXPECT_EQ(input_strings.count(output.substr(noted.begin(k), noted.length(k))), 1u) << policy;
    }
    const KnownLongStrings carried(report.carried);
    auto plain = make_memory_source(output);
    const std::string scanned = test_support::index_summary(build_session_index(*plain, "out", IndexOptions{}));
    IndexOptions stepping;
    stepping.known_strings = &carried;
    auto again = make_memory_source(output);
    EXPECT_EQ(test_support::index_summary(build_session_index(*again, "out", stepping)), scanned) << policy;
  }
}

// Every golden thread export's input (either variant), with its path.
std::vector<std::pair<std::filesystem::path, std::string>> golden_thread_inputs() {
  namespace fs = std::filesystem;
  std::vector<std::pair<fs::path, std::string>> inputs;
  for (const auto& dir : fs::directory_iterator(std::string(PIHYDRATE_SOURCE_DIR) + "/tests/golden/thread")) {
    for (const char* name : {"input.json", "input.jsonl"}) {
      const fs::path input = dir.path() / name;
      if (!fs::exists(input)) continue;
      std::ifstream in(input, std::ios::binary);
      inputs.emplace_back(input, std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
    }
  }
  return inputs;
}

// The same for every golden thread export: converted and hydrated, with
// the default options, the session is clean.
TEST(ThreadHydrate, EveryGoldenExportHydratesToNothingAProviderRejects) {
  std::size_t checked = 0;
  for (const auto& [input, original] : golden_thread_inputs()) {
    std::string bytes = original;
    ConvertedThread t = convert_thread_export(bytes, "t.json", ThreadOptions{});
    if (!t.ok()) continue;  // an err-* case
    Result r = hydrate(t.session);
    ASSERT_TRUE(r.ok) << input;
    expect_nothing_a_provider_rejects(joined(r.lines), input.string());
    ++checked;
  }
  EXPECT_GT(checked, 20u);
}

}  // namespace
}  // namespace pihydrate
