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

#include "common/index_summary.h"
#include "core/json_spans.h"
#include "hydrate/page_window.h"
#include "hydrate/plan.h"
#include "hydrate/thread_document.h"
#include "pihydrate/errors.h"
#include "pihydrate/mapped_file.h"
#include "pihydrate/output_file.h"
#include "pihydrate/spool.h"
#include "pihydrate/thread_export.h"
#include "pihydrate/validator.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/stat.h>

#include <atomic>
#include <sstream>

namespace pihydrate {
namespace {

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

Result hydrate(const std::string& text, HydrateOptions o = {}) {
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
         call_id + R"(","name":"bash","arguments":{"n":0.1}}],"usage":{"cost":{"total":1e-7}},"stopReason":"toolUse","timestamp":1767225602000}})";
}

std::string result(const char* id, const char* parent, const char* call_id) {
  return std::string(R"({"type":"message","id":")") + id + R"(","parentId":")" + parent +
         R"(","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":")" + call_id +
         R"(","toolName":"bash","content":[{"type":"text","text":"ok"}],"isError":false,"timestamp":1767225603000}})";
}

// Lines reach the output one at a time or in blocks; a block that does not
// fit the 1 MiB buffer is written as it is, after what the buffer holds. The
// file has every byte in order either way.
TEST(OutputFileTest, LinesAndBlocksOfAnySizeArriveInOrder) {
  const std::string dir = ::testing::TempDir();
  std::string expected;
  std::ostringstream copied;
  {
    OutputFile output(dir);
    const std::string big_line(300 << 10, 'b');
    std::string block;
    for (int i = 0; i < 5; ++i) block += big_line + "\n";  // 1.5 MiB: past the buffer
    output.write_line("first");
    expected += "first\n";
    output.write_lines("two\nlines\n");
    expected += "two\nlines\n";
    output.write_lines(block);
    expected += block;
    output.write_line("after the block");
    expected += "after the block\n";
    output.write_lines(block);
    expected += block;
    output.finish();
    output.copy_to(copied);
  }
  EXPECT_TRUE(copied.str() == expected) << copied.str().size() << " bytes, expected " << expected.size();
}

// Blocks reserved ahead (expect_bytes) are reserved past the end: the file
// keeps its size while it is written (verification reads it then), writes
// past the reservation go on as usual, and finish() gives back what was not
// written, in both directions of a wrong guess.
TEST(OutputFileTest, ReservedBlocksAreGivenBackAndTheSizeIsWhatWasWritten) {
  const std::string dir = ::testing::TempDir();
  for (const std::uint64_t guess : {std::uint64_t{8} << 20, std::uint64_t{1} << 10}) {
    std::ostringstream copied;
    const std::string line(100 << 10, 'r');  // ten of them: about 1 MiB
    std::string expected;
    OutputFile output(dir);
    output.write_line("header");
    expected += "header\n";
    output.expect_bytes(guess);
    struct stat st {};
    for (int i = 0; i < 10; ++i) {
      output.write_lines(line + "\n");
      expected += line + "\n";
    }
    output.flush();
    ASSERT_EQ(::fstat(output.fd(), &st), 0);
    EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), expected.size()) << "the size is what was written";
    if (guess > expected.size() && st.st_blocks * 512 < static_cast<off_t>(guess)) {
      GTEST_SKIP() << "this file system does not reserve blocks past the end";
    }
    output.finish();
    ASSERT_EQ(::fstat(output.fd(), &st), 0);
    EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), expected.size());
    EXPECT_LT(static_cast<std::uint64_t>(st.st_blocks) * 512, expected.size() + (64 << 10)) << "guess " << guess;
    output.copy_to(copied);
    EXPECT_TRUE(copied.str() == expected);
  }
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
  EXPECT_EQ(r.lines[0], R"({"type":"session","version":3,"id":"s-1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/sandbox"})");
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

TEST(Hydrate, BatchesOfABigSessionComeOutInOrderAndAFailedWriteStopsBoth) {
  std::string text = kHeader + "\n";
  const std::string padding(2000, 'p');
  std::string parent = "";
  constexpr int kEntries = 4000;  // about 8 MiB: eight batches
  for (int i = 0; i < kEntries; ++i) {
    const std::string id = "u" + std::to_string(i);
    text += user(id.c_str(), parent.empty() ? nullptr : parent.c_str(), (std::to_string(i) + "-" + padding).c_str()) + "\n";
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

std::string joined(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
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
  std::string text = kHeader + "\n" + message_entry("u1", nullptr, R"({"role":"user","content":null,"timestamp":1})") +
                     "\n" + message_entry("a1", "u1", R"({"role":"assistant","content":[{"type":"text","text":"hi"}],)" + kAssistantTail) +
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
    return message_entry(id, parent, std::string(R"({"role":"assistant","content":[{"type":"toolCall","id":")") + call_id +
                                         R"(","name":"bash","arguments":{}}],"api":"anthropic-messages",)"
                                         R"("provider":"anthropic","model":"m","usage":{"cost":{"total":0}},)"
                                         R"("stopReason":"toolUse","timestamp":2})");
  };
  std::string text = kHeader + "\n" + user("u1", nullptr, "q") + "\n" + calls("a1", "u1", "x|1") + "\n" +
                     result("r1", "a1", "x|1") + "\n" + calls("a2", "r1", "x_1") + "\n" + result("r2", "a2", "x_1") + "\n" +
                     calls("a3", "r2", "x_1") + "\n" + result("r3", "a3", "x_1") + "\n";
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
  const std::set<Code> repaired = {Code::kUsageMissing,   Code::kContentNotArray, Code::kPendingStopReason,
                                   Code::kBlankTextBlock, Code::kEmptyMessage,    Code::kFirstMessageNotUser,
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
                       message_entry("a1", "u1", R"({"role":"assistant","content":[{"type":"text","text":"hi"}],)"
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
                       message_entry("a1", "u1", R"({"role":"assistant","content":[{"type":"text","text":"hi"}],)"
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
    const char* id;  // nullptr: 70 letters
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
        message_entry("a1", "u1",
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
    return message_entry(id, parent, std::string(R"({"role":"assistant","content":[{"type":"toolCall","id":")") + call_id +
                                         R"(","name":"bash","arguments":{}}],"api":"openai-responses",)"
                                         R"("provider":"openai","model":"gpt-5","usage":{"cost":{"total":0}},)"
                                         R"("stopReason":"toolUse","timestamp":2})");
  };
  std::string text = kHeader + "\n" + user("u1", nullptr, "q") + "\n" + responses_call("a1", "u1", "call_1|fc_1") + "\n" +
                     result("r1", "a1", "call_1|fc_1") + "\n" + responses_call("a2", "r1", "call_1|fc_1") + "\n" +
                     result("r2", "a2", "call_1|fc_1") + "\n";
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
  std::string text = std::string(R"({"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/x"})") + "\n" +
                     R"({"type":"message","message":{"role":"user","content":"q1","timestamp":1}})" + "\n" +
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
    return R"({"type":"compaction","summary":"S","firstKeptEntryIndex":)" + std::to_string(kept) + R"(,"tokensBefore":5})";
  };
  std::string text = std::string(R"({"type":"session","id":"old","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/x"})") + "\n" +
                     user_v1("q1") + "\n" + user_v1("q2") + "\n" + compaction_v1(2) + "\n" + user_v1("q3") + "\n" +
                     compaction_v1(4) + "\n" + user_v1("q4") + "\n";
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

}  // namespace
}  // namespace pihydrate

namespace pihydrate {
namespace {

std::string read_golden_input(const std::string& name) {
  std::ifstream in(std::string(PIHYDRATE_SOURCE_DIR) + "/tests/golden/thread/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// What every block handed to the spool must be: whole lines, and borrowed
// runs in order, inside the block, at least `min_run` long, each the
// export's bytes at its offset.
void expect_sound_block(const SpoolBlock& block, const std::string& original, std::size_t min_run,
                        const std::string& context) {
  ASSERT_FALSE(block.bytes.empty()) << context;
  EXPECT_EQ(block.bytes.back(), '\n') << context << ": a block ends with a whole line";
  std::uint64_t after_last = 0;
  for (const BorrowedRun& run : block.borrowed) {
    EXPECT_GE(run.at, after_last) << context;
    EXPECT_GE(run.length, min_run) << context;
    ASSERT_LE(run.at + run.length, block.bytes.size()) << context;
    EXPECT_EQ(block.bytes.substr(run.at, run.length), original.substr(run.export_offset, run.length)) << context;
    after_last = run.at + run.length;
  }
}

// Of the input's long strings, those wholly inside bytes an output line
// copied unchanged are noted where they land in the output.
TEST(CarriedStringsTest, OnlyStringsWhollyInsideTheCopiedBytesAreCarried) {
  LongStrings input;
  input.add(100, 2000);
  input.add(2200, 1100);
  input.add(5000, 1500);
  LongStrings carried;
  note_carried_strings(input, 90, 50, 3000, carried);    // input [90, 3090): the first only
  note_carried_strings(input, 4000, 9000, 1200, carried);  // [4000, 5200): none, the third runs past it
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
  text += R"({"type":"message","id":"a1","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":")" +
          thinking + R"("},{"type":"toolCall","id":"c1","name":"bash","arguments":{"cmd":")" + long_text +
          R"("}}],"usage":{"cost":{"total":1}},"stopReason":"toolUse","timestamp":2}})" "\n";
  text += R"({"type":"message","id":"r1","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":")" +
          long_text + "\\n\\\"quoted\\\"\xC3\xA9" + long_text + R"("}],"isError":false,"timestamp":3}})" "\r\n";
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

// A thread converted twice: in memory, and through a spool whose blocks
// `check` sees (with their index) before they are gathered into `written`.
struct TwoConversions {
  ConvertedThread memory, spooled;
  std::string written;  // the spool's blocks, one after another
  std::size_t blocks = 0;
};
TwoConversions convert_in_memory_and_spooled(const std::string& original, ThreadOptions options,
                                             const std::function<void(const SpoolBlock&, std::size_t)>& check) {
  TwoConversions out;
  std::string bytes = original;  // the converter may rewrite its input
  out.memory = convert_thread_export(bytes, "t.json", ThreadOptions{});
  options.spool = [&](SpoolBlock& block) {
    check(block, out.blocks++);
    out.written += block.bytes;
    block.clear();
  };
  bytes = original;
  out.spooled = convert_thread_export(bytes, "t.json", options);
  return out;
}

// hydrate streams a converted thread to a temporary file; the bytes there
// must be exactly the in-memory conversion's. Runs a line copies unchanged
// from a compact export are borrowed (named by their place in the export,
// not stored again); none are from a pretty-printed one, whose lines are
// compacted, or once a lone surrogate was rewritten.
TEST(ThreadSpoolTest, SpooledSessionEqualsTheInMemoryOne) {
  struct Case {
    std::string name, bytes;
    bool borrows;
  };
  std::vector<Case> cases = {{"example", read_golden_input("example/input.json"), false},
                             {"jsonl-variant", read_golden_input("jsonl-variant/input.jsonl"), false},
                             {"escaped-surrogates", "", false},
                             {"compact example", "", true},
                             {"compact jsonl-variant", "", true}};
  append_compact_json(cases[2].bytes, read_golden_input("escaped-surrogates/input.json"));
  append_compact_json(cases[3].bytes, cases[0].bytes);
  std::istringstream jsonl(cases[1].bytes);
  for (std::string line; std::getline(jsonl, line);) {
    append_compact_json(cases[4].bytes, line);
    cases[4].bytes += '\n';
  }
  for (const Case& c : cases) {
    ThreadOptions options;
    std::size_t borrowed = 0;
    options.borrow_from_export = true;
    options.min_borrowed_run = 16;  // the examples' messages are short
    const TwoConversions t = convert_in_memory_and_spooled(c.bytes, options, [&](const SpoolBlock& block, std::size_t) {
      expect_sound_block(block, c.bytes, 16, c.name);
      borrowed += block.borrowed.size();
    });
    ASSERT_TRUE(t.memory.ok()) << c.name;
    ASSERT_FALSE(t.memory.session.empty());
    EXPECT_EQ(t.memory.session_bytes, t.memory.session.size());
    ASSERT_TRUE(t.spooled.ok());
    EXPECT_TRUE(t.spooled.session.empty());
    EXPECT_GE(t.blocks, 1u);
    EXPECT_EQ(t.spooled.session_bytes, t.written.size());
    EXPECT_EQ(t.written, t.memory.session) << c.name;
    EXPECT_EQ(t.spooled.origins.size(), t.memory.origins.size());
    if (c.borrows) EXPECT_GE(borrowed, 2u) << c.name;
    else EXPECT_EQ(borrowed, 0u) << c.name;
  }
}

// The converter writes a compact message straight into the spool's block
// and hands the block over first when the line might not fit. Wherever a
// line falls against the MiB (just inside, at, just past it, or bigger than
// a block), and whatever its edits insert (a string content wrapped, a
// missing usage and timestamp filled in), every block holds whole lines,
// stays within the MiB unless it is one line, borrows only the export's
// bytes, and the blocks together are the in-memory session.
TEST(ThreadSpoolTest, BlocksHoldWholeLinesWhereverALineMeetsTheMiB) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  auto entry = [](int n, const std::string& kind, const std::string& message) {
    return "{\"id\":\"e" + std::to_string(n) + "\",\"kind\":\"" + kind + "\",\"ts\":\"2026-11-20T14:02:1" +
           std::to_string(n % 10) + ".000Z\",\"data\":{\"message\":" + message + "}}";
  };
  auto result = [](int n, const std::string& content) {
    return "{\"role\":\"toolResult\",\"toolCallId\":\"c" + std::to_string(n) + "\",\"toolName\":\"read\",\"content\":" +
           content + ",\"isError\":false,\"timestamp\":1}";
  };
  auto text_block = [](std::size_t size) { return "[{\"type\":\"text\",\"text\":\"" + std::string(size, 'x') + "\"}]"; };
  int cases = 0, split_before_a_line = 0, single_line_blocks = 0;
  // The first result fills the block to within `gap` bytes of the MiB; the
  // next line then ends just inside it, at it, or past it.
  for (std::size_t gap : {0u, 1u, 2u, 40u, 100u, 200u, 300u, 5000u}) {
    for (int next : {0, 1, 2, 3}) {
      const std::size_t first_text = kMiB - 400 - gap;
      std::vector<std::string> entries;
      entries.push_back(entry(1, "pi.assistant",
                              "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"c1\",\"name\":\"read\","
                              "\"arguments\":{}},{\"type\":\"toolCall\",\"id\":\"c2\",\"name\":\"read\",\"arguments\":{}}],"
                              "\"usage\":{\"input\":1,\"cost\":{\"total\":0}},\"stopReason\":\"toolUse\",\"timestamp\":1}"));
      entries.push_back(entry(2, "pi.tool_result", result(1, text_block(first_text))));
      const std::string second =
          next == 0   ? result(2, text_block(150))                                          // small, compact
          : next == 1 ? result(2, "\"" + std::string(180, 'y') + "\"")                      // string content: wrapped
          : next == 2 ? result(2, text_block(kMiB + 3000))                                  // bigger than a block
                      : "{\"role\":\"toolResult\",\"toolCallId\":\"c2\",\"toolName\":\"read\",\"content\":" +
                            text_block(120) + "}";  // no timestamp: one is inserted
      entries.push_back(entry(3, "pi.tool_result", second));
      std::string original = "{\"format\":\"thread-export\",\"version\":1,\"thread\":{\"id\":\"t\",\"createdAt\":"
                             "\"2026-11-20T14:02:11.204Z\"},\"entries\":[";
      for (std::size_t k = 0; k < entries.size(); ++k) original += (k ? "," : "") + entries[k];
      original += "]}";

      ThreadOptions options;
      options.borrow_from_export = true;
      const std::string context = "gap " + std::to_string(gap) + ", next line " + std::to_string(next);
      const TwoConversions t =
          convert_in_memory_and_spooled(original, options, [&](const SpoolBlock& block, std::size_t index) {
            expect_sound_block(block, original, options.min_borrowed_run, context);
            const auto lines = std::count(block.bytes.begin(), block.bytes.end(), '\n');
            if (lines == 1 && block.bytes.size() > kMiB) ++single_line_blocks;
            else EXPECT_LE(block.bytes.size(), kMiB) << context << ": only a line on its own may pass the MiB";
            if (index > 0) ++split_before_a_line;
          });
      ASSERT_TRUE(t.memory.ok()) << context;
      ASSERT_TRUE(t.spooled.ok());
      EXPECT_EQ(t.written, t.memory.session) << context;
      EXPECT_EQ(t.spooled.session_bytes, t.written.size());
      ++cases;
    }
  }
  EXPECT_EQ(cases, 32);
  EXPECT_GT(split_before_a_line, 20);  // most cases needed a second block
  EXPECT_GE(single_line_blocks, 8);     // every case of a line bigger than a block
}

// The spool's indexer steps over the strings it borrows from the export,
// whose syntax check found where they end and checked their UTF-8: its index
// is the one a full scan of the converted session gives. An export with
// invalid UTF-8 in a string is not trusted so: its strings are scanned (the
// third case shows why, telling the indexer anyway: the bad byte goes unseen).
TEST(ThreadSpoolTest, TheIndexerStepsOverBorrowedStringsForTheSameIndex) {
  const std::string long_text(3000, 'x');
  for (int run = 0; run < 3; ++run) {
    const std::string bad = run == 0 ? "" : "\xC3\x28";
    auto entry = [](int n, const std::string& kind, const std::string& message) {
      return "{\"id\":\"e" + std::to_string(n) + "\",\"kind\":\"" + kind + "\",\"ts\":\"2026-11-20T14:02:1" +
             std::to_string(n % 10) + ".000Z\",\"data\":{\"message\":" + message + "}}";
    };
    std::string original = "{\"format\":\"thread-export\",\"version\":1,\"thread\":{\"id\":\"t\",\"createdAt\":"
                           "\"2026-11-20T14:02:11.204Z\"},\"entries\":[";
    for (int n = 1; n < 40; n += 2) {
      const std::string call = "c" + std::to_string(n);
      original += (n > 1 ? "," : "") +
                  entry(n, "pi.assistant",
                        "{\"role\":\"assistant\",\"content\":[{\"type\":\"thinking\",\"thinking\":\"" + long_text.substr(0, 300 + n) +
                            "\"},{\"type\":\"toolCall\",\"id\":\"" + call + "\",\"name\":\"read\",\"arguments\":{\"p\":\"" +
                            long_text + "\"}}],\"usage\":{\"input\":1,\"cost\":{\"total\":0}},\"stopReason\":\"toolUse\",\"timestamp\":1}") +
                  "," +
                  entry(n + 1, "pi.tool_result",
                        "{\"role\":\"toolResult\",\"toolCallId\":\"" + call + "\",\"toolName\":\"read\",\"content\":[{\"type\":"
                        "\"text\",\"text\":\"" + long_text + (n == 21 ? bad : "") + "\\n\\u00e9\\\"\"}],\"isError\":false,\"timestamp\":1}");
    }
    original += "]}";
    std::string bytes = original;
    const ConvertedThread memory = convert_thread_export(bytes, "t.json", ThreadOptions{});
    ASSERT_TRUE(memory.ok());
    IndexOptions noting;
    noting.record_long_strings = true;
    auto source = make_memory_source(memory.session);
    const SessionIndex scanned = build_session_index(*source, "t.json", noting);

    FILE* spool_file = std::tmpfile();
    ASSERT_NE(spool_file, nullptr);
    SpoolIndexer indexer(fileno(spool_file), "t.json", noting);
    ThreadOptions options;
    options.borrow_from_export = true;
    options.spool = [&](SpoolBlock& block) { indexer.append(block); };
    int known = 0;
    options.export_strings = [&](const LongValues& strings) {
      ++known;
      indexer.know_export_strings(strings);
    };
    ThreadDocument doc;
    ASSERT_TRUE(doc.parse_plain(original, 512));
    EXPECT_EQ(doc.long_values().strings_valid_utf8(), bad.empty());
    if (run == 2) indexer.know_export_strings(doc.long_values());
    bytes = original;
    const ConvertedThread spooled = convert_thread_export(bytes, "t.json", options);
    ASSERT_TRUE(spooled.ok());
    const SessionIndex index = indexer.finish();
    EXPECT_EQ(known, bad.empty() ? 1 : 0);
    EXPECT_EQ(scanned.invalid_utf8_count, bad.empty() ? 0u : 1u);
    if (run == 2) {
      EXPECT_EQ(index.invalid_utf8_count, 0u) << "a string known from the export is not scanned again";
    } else {
      // Each assistant's thinking and arguments, each result's text (all of
      // LongStrings::kMinLength bytes or more); none from the line with bad UTF-8.
      static_assert(LongStrings::kMinLength <= 300, "the thinking texts count");
      EXPECT_EQ(index.long_strings.size(), bad.empty() ? 60u : 59u);
      EXPECT_EQ(test_support::index_summary(index), test_support::index_summary(scanned)) << "run " << run;
    }
    std::fclose(spool_file);
  }
}

// An export of random letters in a temporary file, and an empty spool file.
struct SpoolTestFiles {
  SpoolTestFiles(std::size_t export_size, std::mt19937& rng) : exported(export_size, ' ') {
    for (char& c : exported) c = static_cast<char>('a' + rng() % 26);
    export_file = std::tmpfile();
    spool_file = std::tmpfile();
    written = export_file && spool_file &&
              ::pwrite(fileno(export_file), exported.data(), exported.size(), 0) == static_cast<ssize_t>(exported.size());
  }
  ~SpoolTestFiles() {
    if (export_file) std::fclose(export_file);
    if (spool_file) std::fclose(spool_file);
  }
  std::string exported;
  FILE* export_file = nullptr;
  FILE* spool_file = nullptr;
  bool written = false;
};

// Borrowed runs that follow each other in the export, as a conversion's
// do, are read a group at a time (one preadv, the bytes between them into
// scratch): small gaps, gaps too big to read through, groups longer than
// one call takes, and a run that goes back in the export all read back
// the session's bytes.
TEST(ThreadSpoolTest, RunsInExportOrderReadBackWhateverTheirGaps) {
  std::mt19937 rng(5);
  SpoolTestFiles files(4 << 20, rng);
  ASSERT_TRUE(files.written);
  const std::string& exported = files.exported;
  std::string session;
  SpoolLayout layout;
  {
    SpoolIndexer indexer(fileno(files.spool_file), "spool");
    std::size_t from = 0;
    for (int b = 0; b < 8; ++b) {
      SpoolBlock block;
      for (int line = 0; line < 400; ++line) {
        block.bytes += "{\"type\":\"custom\",\"data\":\"";
        const std::size_t length = 1 + rng() % 300;
        const std::uint32_t pick = b < 5 ? 10 : rng() % 100;  // the first 2000 runs in one group, as far as a call goes
        from += pick < 2 ? (100 << 10) : pick < 4 ? 0 : rng() % 400;  // a big gap, none, or a small one
        if (pick == 50) from = rng() % (from + 1);                       // back in the export
        if (from + length > exported.size()) from = 0;
        block.borrowed.push_back({block.bytes.size(), from, length});
        block.bytes.append(exported, from, length);
        from += length;
        block.bytes += "\"}\n";
      }
      session += block.bytes;
      indexer.append(block);
    }
    indexer.finish();
    layout = indexer.take_layout();
  }
  EXPECT_EQ(layout.run_count(), 3200u);
  auto source = make_spool_line_source(fileno(files.spool_file), fileno(files.export_file), std::move(layout), "spool");
  std::string scratch;
  EXPECT_TRUE(source->read(0, session.size(), scratch) == session) << "all 3200 runs at once";
  for (int i = 0; i < 200; ++i) {
    const std::uint64_t offset = rng() % session.size();
    const std::uint64_t length = rng() % (session.size() - offset + 1);
    ASSERT_TRUE(source->read(offset, length, scratch) == std::string_view(session).substr(offset, length)) << offset << " " << length;
  }
}

// The session as SpoolIndexer stores it (the bytes between borrowed runs)
// and reads it back through its layout: any range, wherever it starts and
// ends (in a run, between runs, across blocks), is the session's bytes.
TEST(ThreadSpoolTest, ALayoutReadsBackAnyRangeOfTheSession) {
  std::mt19937 rng(3);
  SpoolTestFiles files(1 << 16, rng);
  ASSERT_TRUE(files.written);
  const std::string& exported = files.exported;
  FILE* const export_file = files.export_file;
  FILE* const spool_file = files.spool_file;
  std::string session;
  SpoolLayout layout;
  std::uint64_t stored = 0;
  {
    SpoolIndexer indexer(fileno(spool_file), "spool");
    for (int b = 0; b < 40; ++b) {
      SpoolBlock block;
      for (int line = 0; line < 1 + static_cast<int>(rng() % 4); ++line) {
        block.bytes += "{\"type\":\"custom\",\"data\":\"";
        for (int piece = 0; piece < static_cast<int>(rng() % 4); ++piece) {
          const std::size_t from = rng() % (exported.size() - 600), length = 1 + rng() % 500;
          if (rng() % 3) block.borrowed.push_back({block.bytes.size(), from, length});
          block.bytes.append(exported, from, length);
          if (rng() % 2) block.bytes += "-";  // stored bytes between runs, or none
        }
        block.bytes += "\"}\n";
      }
      session += block.bytes;
      for (const BorrowedRun& run : block.borrowed) stored -= run.length;
      stored += block.bytes.size();
      indexer.append(block);
      EXPECT_TRUE(block.bytes.empty() && block.borrowed.empty());
    }
    const SessionIndex index = indexer.finish();
    EXPECT_EQ(index.entries.size(), std::count(session.begin(), session.end(), '\n'));
    layout = indexer.take_layout();
  }
  EXPECT_EQ(layout.session_size(), session.size());
  EXPECT_EQ(layout.stored_size(), stored);
  EXPECT_EQ(static_cast<std::uint64_t>(::lseek(fileno(spool_file), 0, SEEK_END)), stored) << "only stored bytes are written";
  EXPECT_GT(layout.run_count(), 20u);
  auto source = make_spool_line_source(fileno(spool_file), fileno(export_file), std::move(layout), "spool");
  std::string scratch;
  for (int i = 0; i < 3000; ++i) {
    const std::uint64_t offset = rng() % session.size();
    const std::uint64_t length = rng() % (session.size() - offset + 1);
    ASSERT_EQ(source->read(offset, length, scratch), std::string_view(session).substr(offset, length)) << offset << " " << length;
  }
  EXPECT_EQ(source->read(0, session.size(), scratch), session);
  EXPECT_THROW(source->read(session.size() - 5, 10, scratch), InputShrankError);
  // The export cut short: a borrowed run cannot be read.
  ASSERT_EQ(::ftruncate(fileno(export_file), 0), 0);
  EXPECT_THROW(source->read(0, session.size(), scratch), InputShrankError);
}

// A residency that records what the converter tells it.
class RecordingResidency final : public ExportResidency {
 public:
  void release_before(std::size_t offset) override { released.push_back(offset); }
  void rewritten(std::size_t begin, std::size_t end) override { rewrites.emplace_back(begin, end); }
  void release_range(std::size_t begin, std::size_t end) override { ranges.emplace_back(begin, end); }
  std::vector<std::size_t> released;
  std::vector<std::pair<std::size_t, std::size_t>> rewrites, ranges;
};

// A deferred release waits for carry_out, which passes on the furthest one
// asked for; the other calls pass through at once; after stop (which
// carries out what is left) nothing reaches the target.
TEST(DeferredReleaseTest, AsksWaitForCarryOutAndNothingPassesAfterStop) {
  RecordingResidency target;
  DeferredRelease deferred(target);
  deferred.carry_out();  // nothing asked: nothing told
  deferred.release_before(300);
  deferred.release_before(100);
  EXPECT_TRUE(target.released.empty());
  deferred.rewritten(5, 9);
  deferred.release_range(10, 20);
  EXPECT_EQ(target.rewrites, (std::vector<std::pair<std::size_t, std::size_t>>{{5, 9}}));
  EXPECT_EQ(target.ranges, (std::vector<std::pair<std::size_t, std::size_t>>{{10, 20}}));
  deferred.carry_out();
  deferred.carry_out();
  EXPECT_EQ(target.released, std::vector<std::size_t>{300});
  deferred.release_before(50);
  deferred.stop();
  EXPECT_EQ(target.released, (std::vector<std::size_t>{300, 50}));
  deferred.release_before(70);
  deferred.carry_out();
  deferred.rewritten(1, 2);
  deferred.release_range(1, 2);
  deferred.stop();
  EXPECT_EQ(target.released.size(), 2u);
  EXPECT_EQ(target.rewrites.size(), 1u);
  EXPECT_EQ(target.ranges.size(), 1u);
}

// While the lines are built, the converter's releases go to the lines'
// residency instead (the CLI's DeferredRelease), and the result is the
// same: an export of some MiB, so that the lines' walk moves far enough to
// let go of what it read.
TEST(ThreadResidencyTest, ReleasesWhileBuildingLinesGoToTheLinesResidency) {
  std::string text = "{\"format\":\"thread-export\",\"version\":1,\"thread\":{\"id\":\"t\"},\"entries\":[\n";
  for (int i = 0; text.size() < (std::size_t{12} << 20); ++i)
    text += std::string(i ? ",\n" : "") + "{\"id\":\"e" + std::to_string(i) + "\",\"kind\":\"chat\",\"role\":\"user\",\"text\":\"" +
            std::string(2000 + i % 300, 'x') + "\"}";
  text += "\n]}\n";
  std::string plain = text;
  const ConvertedThread expected = convert_thread_export(plain, "t.json", ThreadOptions{});
  ASSERT_TRUE(expected.ok());
  std::string bytes = text;
  RecordingResidency before_lines, lines;
  ThreadOptions options;
  options.residency = &before_lines;
  options.lines_residency = &lines;
  const ConvertedThread converted = convert_thread_export(bytes, "t.json", options);
  EXPECT_EQ(converted.session, expected.session);
  EXPECT_FALSE(lines.released.empty());
  // The phases before let go of the whole export as each ended, and the
  // lines' phase asked the other residency nothing.
  const std::size_t at_end_of_phases =
      static_cast<std::size_t>(std::count(before_lines.released.begin(), before_lines.released.end(), bytes.size()));
  EXPECT_GE(at_end_of_phases, 2u);
  RecordingResidency only;
  ThreadOptions without = options;
  without.residency = &only;
  without.lines_residency = nullptr;
  std::string again = text;
  EXPECT_EQ(convert_thread_export(again, "t.json", without).session, expected.session);
  EXPECT_EQ(only.released.size(), before_lines.released.size() + lines.released.size());
}

std::string golden_thread() {
  std::ifstream in(std::string(PIHYDRATE_SOURCE_DIR) + "/tests/golden/thread/example/input.json", std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A pi.tool_result whose message goes out unchanged is not walked again
// when its line is built, and its toolCallId is read by a walk that stops at
// the first one; a message naming toolCallId twice is walked whole, so the
// last one counts, as with JSON.parse. A compaction keeping the result must
// keep the call it answers too: its anchor tells which id was read.
TEST(ThreadLinesTest, AResultsToolCallIdIsTheLastOneNamed) {
  auto thread = [](const std::string& call_ids) {
    return std::string(R"({"format":"thread-export","version":1,"thread":{"id":"t"},"entries":[)") +
           R"({"id":"u","kind":"chat","role":"user","text":"q","ts":"2026-11-20T14:02:10.000Z"},)"
           R"({"id":"a1","kind":"pi.assistant","ts":"2026-11-20T14:02:11.000Z","data":{"message":{"role":"assistant",)"
           R"("content":[{"type":"toolCall","id":"c1","name":"read","arguments":{}}],"usage":{"input":1,"cost":{"total":0}},)"
           R"("stopReason":"toolUse","timestamp":1}}},)"
           R"({"id":"r1","kind":"pi.tool_result","ts":"2026-11-20T14:02:12.000Z","data":{"message":{"role":"toolResult",)" +
           call_ids + R"(,"toolName":"read","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":2}}},)"
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

// A pi.assistant with nothing to repair at its own level is walked only to
// its content; one naming content twice is walked whole (the last counts,
// as with JSON.parse: here an array, so nothing is wrapped). A chat
// assistant turn and the trailer still take the model of the last
// pi.assistant before them, read only when asked for.
// A content block's type is read unescaped: an empty text block whose type
// is spelled with an escape is dropped like any other, and a tool call's
// type so spelled still counts.
TEST(ThreadLinesTest, AContentBlocksTypeIsReadUnescaped) {
  std::string text = std::string(R"({"format":"thread-export","version":1,"thread":{"id":"t"},"entries":[)") +
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

TEST(ThreadLinesTest, AnAssistantsContentIsTheLastOneNamedAndItsModelIsReadWhenAsked) {
  auto thread = [](const std::string& contents) {
    return std::string(R"({"format":"thread-export","version":1,"thread":{"id":"t"},"entries":[)") +
           R"({"id":"u","kind":"chat","role":"user","text":"q","ts":"2026-11-20T14:02:10.000Z"},)"
           R"({"id":"a1","kind":"pi.assistant","ts":"2026-11-20T14:02:11.000Z","data":{"message":{"role":"assistant",)" +
           contents + R"(,"api":"x-api","provider":"p1","model":"m1","usage":{"input":1,"cost":{"total":0}},)"
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
    const ConvertedThread t = convert_thread_export(bytes, "t.json", ThreadOptions{});
    if (!t.ok()) continue;  // an err-* case
    Result r = hydrate(t.session);
    ASSERT_TRUE(r.ok) << input;
    expect_nothing_a_provider_rejects(joined(r.lines), input.string());
    ++checked;
  }
  EXPECT_GT(checked, 20u);
}

// A string's text without a copy: the document's own bytes when it has no
// escape, else unescaped into the scratch string; nothing for a non-string.
TEST(ThreadDocumentTest, StringTextIsTheStringValueCopiedOnlyWhenEscaped) {
  std::string text = R"({"plain":"pi.chunk","escaped":"a\"b\u00e9\n","empty":"","number":12,"object":{"k":"v"}})";
  ThreadDocument doc;
  ASSERT_TRUE(doc.parse_plain(text, 64));
  std::string scratch;
  for (const MemberSpan& m : doc.members(doc.root())) {
    const JsonRef value{m.value_begin, m.value_end};
    const std::string_view got = doc.string_text(value, scratch);
    EXPECT_EQ(std::string(got), doc.string_value(value)) << m.key();
    const bool in_document = got.data() >= doc.bytes().data() && got.data() < doc.bytes().data() + doc.bytes().size();
    if (m.key() == "plain") {
      EXPECT_TRUE(in_document);
    }
    if (m.key() == "escaped") {
      EXPECT_EQ(got, "a\"b\xC3\xA9\n");
      EXPECT_EQ(got.data(), scratch.data());
    }
    if (m.key() == "number" || m.key() == "object") {
      EXPECT_TRUE(got.empty());
    }
  }
  EXPECT_TRUE(doc.string_text(JsonRef{}, scratch).empty());
}

// The quick path records line starts during its syntax check instead of a
// pass of its own: every position it gives must be the full path's, BOM,
// CRLF, blank lines and a big document split over two threads included.
TEST(ThreadDocumentTest, OnePassPositionsAreTheFullParsesPositions) {
  std::string big = "{\"format\":\"thread-export\",\"version\":1,\"thread\":{\"id\":\"t\"},\"entries\":[\n";
  for (int i = 0; big.size() < ThreadDocument::kSecondThreadBytes + 4096; ++i)
    big += std::string(i ? ",\n" : "") + "{\"id\":\"e" + std::to_string(i) + "\",\"kind\":\"chat\",\"role\":\"user\",\"text\":\"" +
           std::string(200 + i % 300, 'x') + "\"}";
  big += "\r\n]}\n\n";
  const std::vector<std::string> documents = {
      "{\"a\":1}",
      "\xEF\xBB\xBF\n\n  {\"a\":\n[1,\r\n2]}\n",
      "\n{\n  \"a\": \"x\\ny\",\n  \"b\": [\n    {}\n  ]\n}\n\n\n",
      "{\"t\":{\"x\":[1,[2]]},\"e\":[ 1 , \"s\",[[]],{\"y\":[3]} ],\"f\":[]}",
      big,
  };
  for (const std::string& text : documents) {
    std::string one_pass_bytes = text, full_bytes = text;
    ThreadDocument one_pass, full;
    ASSERT_TRUE(one_pass.parse_plain(one_pass_bytes, 64)) << text.substr(0, 80);
    ASSERT_TRUE(full.parse(full_bytes, 64)) << text.substr(0, 80);
    EXPECT_EQ(one_pass.root().begin, full.root().begin);
    EXPECT_EQ(one_pass.root().end, full.root().end);
    // The arrays' elements the syntax check recorded are those a walk finds,
    // for the top-level object's arrays and (walked) for the others.
    auto spans = [](const std::vector<JsonRef>& refs) {
      std::vector<std::pair<std::size_t, std::size_t>> out;
      for (const JsonRef& r : refs) out.emplace_back(r.begin, r.end);
      return out;
    };
    std::vector<JsonRef> arrays;
    for (const MemberSpan& m : full.members(full.root())) {
      const JsonRef value{m.value_begin, m.value_end};
      if (full.kind(value) == RefKind::kArray) arrays.push_back(value);
      for (const MemberSpan& inner : full.members(value))
        if (full.kind({inner.value_begin, inner.value_end}) == RefKind::kArray) arrays.push_back({inner.value_begin, inner.value_end});
    }
    for (const JsonRef& array : arrays) {
      std::string fresh_bytes = text;  // what the check found is handed over once: a fresh parse for each array
      ThreadDocument fresh;
      ASSERT_TRUE(fresh.parse_plain(fresh_bytes, 64));
      EXPECT_EQ(spans(fresh.top_array_elements(array)), spans(full.elements(array))) << text.substr(array.begin, 40);
      EXPECT_EQ(spans(fresh.top_array_elements(array)), spans(full.elements(array))) << "the second time, walked";
      EXPECT_EQ(spans(full.top_array_elements(array)), spans(full.elements(array)));
    }
    const std::size_t step = text.size() > 100000 ? 97 : 1;
    for (std::size_t at = 0; at < text.size(); at += step) {
      std::uint64_t line1 = 0, column1 = 0, line2 = 0, column2 = 0;
      one_pass.position(at, line1, column1);
      full.position(at, line2, column2);
      ASSERT_EQ(line1, line2) << at;
      ASSERT_EQ(column1, column2) << at;
    }
  }
}

// The syntax check's second thread lets the pages it read go a step at a
// time, not at each MiB it reports: every drop interrupts the other core.
// What it read is let go in the end all the same.
TEST(ThreadDocumentTest, TheSecondThreadLetsPagesGoAStepAtATime) {
  std::string text = "{\"format\":\"thread-export\",\"version\":1,\"thread\":{\"id\":\"t\"},\"entries\":[\n";
  for (int i = 0; text.size() < 4 * ThreadDocument::kSecondThreadBytes; ++i)
    text += std::string(i ? ",\n" : "") + "{\"id\":\"e" + std::to_string(i) + "\",\"kind\":\"chat\",\"role\":\"user\",\"text\":\"" +
            std::string(500 + i % 700, 'x') + "\"}";
  text += "]}\n";
  RecordingResidency residency;
  ThreadDocument doc;
  doc.set_residency(&residency);
  ASSERT_TRUE(doc.parse_plain(text, 64));
  ASSERT_GE(residency.ranges.size(), 2u) << "the second thread read several steps";
  const std::size_t begin = residency.ranges.front().first;
  EXPECT_GT(begin, text.size() / 4);
  std::size_t last = begin;
  for (const auto& range : residency.ranges) {
    EXPECT_EQ(range.first, begin);
    EXPECT_GE(range.second, last + PageWindow::kStep) << "a release less than a step after the last";
    last = range.second;
  }
  EXPECT_GT(last, text.size() - PageWindow::kStep - (std::size_t{1} << 20)) << "nearly to the end";
  ASSERT_FALSE(residency.released.empty());
  EXPECT_EQ(residency.released.back(), text.size());  // then everything goes
}

// A mapped file: released pages read back the file's bytes, and a page
// holding rewritten bytes keeps them.
TEST(MappedFileTest, ReleasedPagesReadBackAndRewrittenBytesStay) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::string content(3 * page + 100, '\0');
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>('a' + i % 26);
  FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::fwrite(content.data(), 1, content.size(), file), content.size());
  std::fflush(file);
  auto mapped = MappedFile::map(fileno(file));
  ASSERT_NE(mapped, nullptr);
  ASSERT_EQ(mapped->size(), content.size());
  mapped->data()[page + 10] = '#';
  mapped->rewritten(page + 10, page + 11);
  mapped->data()[2 * page + 5] = '!';  // not reported: may be lost on release
  mapped->release_before(mapped->size());
  std::string expected = content;
  expected[page + 10] = '#';
  EXPECT_EQ(std::string(mapped->data(), mapped->size()), expected);

  // A range lets go of the whole pages inside it only: the page it starts
  // in keeps an unreported edit, one wholly inside loses it, and a page
  // holding reported bytes keeps them.
  mapped->data()[10] = '<';           // page 0: the range starts inside it
  mapped->data()[2 * page + 5] = '>';  // page 2: wholly inside, not reported
  mapped->release_range(1, 3 * page);
  expected[10] = '<';
  EXPECT_EQ(std::string(mapped->data(), mapped->size()), expected);
  mapped->release_range(0, mapped->size());
  expected[10] = content[10];
  EXPECT_EQ(std::string(mapped->data(), mapped->size()), expected);
  mapped.reset();
  std::fclose(file);
  EXPECT_EQ(MappedFile::map(-1), nullptr);  // not a file: the caller reads instead
}

}  // namespace
}  // namespace pihydrate
