// Qwen Code chat files -> pi sessions (docs/qwen-code.md): how the reader
// bids, and the rules a recording alone does not pin down, each on a small
// hand-written chat file.
#include <sstream>

#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include "common/converted_session.h"
#include "readers/readers.h"

namespace pihydrate {
namespace {

using test_support::Converted;
using test_support::entries_of;
using test_support::format_of;
using test_support::texts_of;

Converted convert(const std::string& chat, const std::string& leaf = "") {
  Converted out;
  out.session = convert_qwen_code(chat, "chat.jsonl", leaf, out);
  return out;
}

// One record of a chat file: its type, uuid, parent ("" for none) and the rest of its members.
std::string rec(const std::string& type, const std::string& uuid, const std::string& parent, const std::string& rest) {
  return R"({"uuid":")" + uuid + R"(","parentUuid":)" + (parent.empty() ? "null" : "\"" + parent + "\"") +
         R"(,"sessionId":"s-1","timestamp":"2026-11-28T06:00:00.000Z","type":")" + type +
         R"(","provenance":"x","cwd":"/home/me/repo","version":"0.24.4",)" + rest + "}\n";
}
std::string user(const std::string& uuid, const std::string& parent, const std::string& text) {
  return rec("user", uuid, parent, R"("message":{"role":"user","parts":[{"text":")" + text + R"("}]})");
}
std::string model(const std::string& uuid, const std::string& parent, const std::string& parts) {
  return rec("assistant", uuid, parent,
             R"("model":"qwen3-coder-plus","message":{"role":"model","parts":[)" + parts + "]}");
}
std::string telemetry(const std::string& uuid, const std::string& parent) {
  return rec("system", uuid, parent, R"("subtype":"ui_telemetry","systemPayload":{"uiEvent":{"event.name":"x"}})");
}

TEST(QwenCodeReader, OutbidsClaudeCodeWhoseRecordsAlsoHaveUuidAndSessionId) {
  EXPECT_EQ(format_of(user("u1", "", "hi")), "qwen-code");
  EXPECT_EQ(format_of(telemetry("t1", "")), "qwen-code");
  EXPECT_EQ(format_of(R"({"type":"user","uuid":"u","sessionId":"s","message":{"role":"user","content":"hi"}})"),
            "claude-code");
}

TEST(QwenCodeReader, SystemRecordsLinkTheChainButAreNotWritten) {
  // Q2, Q3: the parent of the answer is a telemetry record.
  Converted s = convert(user("u1", "", "hi") + telemetry("t1", "u1") + model("a1", "t1", R"({"text":"hello"})"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(texts_of(s), (std::vector<std::string>{"session", "user:hi", "assistant:hello"}));
  EXPECT_EQ(s.repairs["qwen-system-records"], 1u);
}

TEST(QwenCodeReader, TheChainEndsAtTheLastRecordOrAtLeaf) {
  // Q2: a rewind leaves a branch the file still holds.
  const std::string chat =
      user("u1", "", "one") + model("a1", "u1", R"({"text":"first"})") + model("a2", "u1", R"({"text":"second"})");
  EXPECT_EQ(texts_of(convert(chat)), (std::vector<std::string>{"session", "user:one", "assistant:second"}));
  Converted left = convert(chat, "a1");
  EXPECT_TRUE(left.leaf_taken || left.ok());
  EXPECT_EQ(texts_of(left), (std::vector<std::string>{"session", "user:one", "assistant:first"}));
  Converted missing = convert(chat, "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.diagnostics[0].code, Code::kBranchNotFound);
}

TEST(QwenCodeReader, ALoopIsAnErrorNotAHang) {
  Converted s = convert(user("u1", "a1", "one") + model("a1", "u1", R"({"text":"x"})"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.diagnostics[0].code, Code::kTranscriptInvalid);
  EXPECT_NE(s.diagnostics[0].message.find("closes a loop"), std::string::npos) << s.diagnostics[0].message;
}

TEST(QwenCodeReader, AMissingParentStartsTheConversationWithAWarning) {
  Converted s = convert(user("u2", "gone", "two") + model("a2", "u2", R"({"text":"x"})"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.repairs["qwen-chain-cut"], 1u);
  EXPECT_EQ(texts_of(s), (std::vector<std::string>{"session", "user:two", "assistant:x"}));
}

TEST(QwenCodeReader, FragmentsOfOneUuidAreOneMessage) {
  // Q2: Qwen Code aggregates records that share a uuid, parts in file order.
  Converted s =
      convert(user("u1", "", "hi") + model("a1", "u1", R"({"text":"a"})") + model("a1", "u1", R"({"text":"b"})"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(texts_of(s), (std::vector<std::string>{"session", "user:hi", "assistant:ab"}));
}

TEST(QwenCodeReader, ThoughtsCallsAndFailedResults) {
  const std::string chat =
      user("u1", "", "go") +
      model(
          "a1", "u1",
          R"({"text":"plan","thought":true},{"text":"Let me look."},{"functionCall":{"id":"call_1","name":"run_shell_command","args":{"command":"cat x"}}})") +
      rec("tool_result", "r1", "a1",
          R"("message":{"role":"user","parts":[{"functionResponse":{"id":"call_1","name":"run_shell_command","response":{"error":"Exit Code: 1"}}}]},"toolCallResult":{"callId":"call_1","status":"error"})");
  Converted s = convert(chat);
  ASSERT_TRUE(s.ok());
  auto e = entries_of(s);
  ASSERT_EQ(e.size(), 4u);
  const auto& a = e[2]["message"];
  EXPECT_STREQ(a["content"][0]["type"].GetString(), "thinking");
  EXPECT_STREQ(a["content"][0]["thinkingSignature"].GetString(), "reasoning_content");
  EXPECT_STREQ(a["content"][2]["type"].GetString(), "toolCall");
  EXPECT_STREQ(a["content"][2]["arguments"]["command"].GetString(), "cat x");
  EXPECT_STREQ(a["stopReason"].GetString(), "toolUse");
  const auto& r = e[3]["message"];
  EXPECT_STREQ(r["role"].GetString(), "toolResult");
  EXPECT_STREQ(r["toolCallId"].GetString(), "call_1");
  EXPECT_STREQ(r["content"][0]["text"].GetString(), "Exit Code: 1");
  EXPECT_TRUE(r["isError"].GetBool());
}

TEST(QwenCodeReader, AResultThatIsNeitherOutputNorErrorIsSentAsJson) {
  // Q6: as Qwen Code's Chat Completions converter does.
  Converted s = convert(
      user("u1", "", "go") + model("a1", "u1", R"({"functionCall":{"id":"c","name":"t","args":{}}})") +
      rec("tool_result", "r1", "a1",
          R"("message":{"role":"user","parts":[{"functionResponse":{"id":"c","name":"t","response":{"n":1}}}]})"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(texts_of(s).back(), "toolResult:{\"n\":1}");
}

TEST(QwenCodeReader, ImagesAreKeptOtherMediaIsWarned) {
  Converted s = convert(rec(
      "user", "u1", "",
      R"("message":{"role":"user","parts":[{"text":"see"},{"inlineData":{"mimeType":"image/png","data":"AAAA"}},{"inlineData":{"mimeType":"audio/wav","data":"AAAA"}}]})"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(texts_of(s).back(), "user:see[image]");
  EXPECT_EQ(s.repairs["qwen-parts-dropped"], 1u);
}

TEST(QwenCodeReader, CompressionStartsFromTheSummaryAndKeepsWhatQwenKept) {
  // Q8: compressedHistory is the history Qwen Code continues with.
  const std::string chat =
      user("u1", "", "old") + model("a1", "u1", R"({"text":"old answer"})") + user("u2", "a1", "/compress") +
      rec("system", "c1", "u2",
          R"("subtype":"chat_compression","systemPayload":{"info":{"originalTokenCount":900},"compressedHistory":[{"role":"user","parts":[{"text":"<state_snapshot>S</state_snapshot>"}]},{"role":"model","parts":[{"text":"Got it."}]}]})") +
      rec("system", "s1", "c1",
          R"("subtype":"slash_command","systemPayload":{"phase":"result","rawCommand":"/compress"})") +
      user("u3", "s1", "next");
  Converted s = convert(chat);
  ASSERT_TRUE(s.ok());
  auto e = entries_of(s);
  EXPECT_EQ(texts_of(s), (std::vector<std::string>{"session", "user:old", "assistant:old answer", "user:/compress",
                                                   "compaction", "assistant:Got it.", "user:next"}));
  const auto& c = e[4];
  EXPECT_STREQ(c["summary"].GetString(), "<state_snapshot>S</state_snapshot>");
  EXPECT_STREQ(c["firstKeptEntryId"].GetString(), c["id"].GetString());
  EXPECT_EQ(c["tokensBefore"].GetUint64(), 900u);
}

TEST(QwenCodeReader, ASlashCommandQwenRanItselfTakesBackItsPrompt) {
  // Q9: /stats typed as a prompt never reached the model.
  Converted s = convert(user("u1", "", "/stats") +
                        rec("system", "s1", "u1",
                            R"("subtype":"slash_command","systemPayload":{"phase":"result","rawCommand":"/stats"})") +
                        user("u2", "s1", "hi"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(texts_of(s), (std::vector<std::string>{"session", "user:hi"}));
  EXPECT_EQ(s.repairs["qwen-command-prompts"], 1u);
}

TEST(QwenCodeReader, BadInputIsAnErrorWithItsPlace) {
  Converted notjson = convert(user("u1", "", "hi") + "{oops\n");
  ASSERT_FALSE(notjson.ok());
  EXPECT_EQ(notjson.diagnostics[0].line, 2u);
  Converted parts = convert(rec("user", "u1", "", R"("message":{"role":"user","parts":"hi"})"));
  ASSERT_FALSE(parts.ok());
  EXPECT_EQ(parts.diagnostics[0].line, 1u);
  Converted mixed = convert(
      user("u1", "", "hi") +
      R"({"uuid":"u2","parentUuid":"u1","sessionId":"other","type":"user","message":{"role":"user","parts":[]}})"
      "\n");
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.diagnostics[0].line, 2u);
  Converted empty = convert(telemetry("t1", ""));
  ASSERT_FALSE(empty.ok());
}

}  // namespace
}  // namespace pihydrate

namespace pihydrate {
namespace {

// Q1, Q2: the first pass reads a record's ids by skimming its line; what it
// reads is what the record's Document says, for repeated keys (the last
// counts) and values that are not strings.
TEST(QwenCodeReader, SkimmedRecordsReadAsTheirDocuments) {
  const std::string chat =
      R"({"cwd":{"a":1},"cwd":"/home/me","uuid":"x","uuid":"u1","parentUuid":null,"sessionId":"s-1","type":"user","timestamp":"2026-11-28T06:00:00.000Z","message":{"role":"user","parts":[{"text":"Hi","uuid":"no"}]}})"
      "\n" +
      model("a1", "u1", R"({"text":"Hello"})") + telemetry("t1", "a1") +
      R"({"uuid":["u9"],"type":"user","parentUuid":"t1","message":{"role":"user","parts":[{"text":"lost"}]}})"
      "\n" +
      R"({"uuid":"u2","parentUuid":"t1","parentUuid":"a1","type":7,"type":"user","subtype":null,"message":{"role":"user","parts":[{"text":"More"}]}})"
      "\n" +
      model("a2", "u2", R"({"text":"Sure"})");
  const Converted skimmed = convert(chat), parsed = convert(test_support::with_escaped_keys(chat));
  ASSERT_TRUE(skimmed.ok());
  EXPECT_EQ(test_support::everything_of(skimmed), test_support::everything_of(parsed));
  EXPECT_EQ(texts_of(skimmed),
            (std::vector<std::string>{"session", "user:Hi", "assistant:Hello", "user:More", "assistant:Sure"}));
}

}  // namespace
}  // namespace pihydrate
