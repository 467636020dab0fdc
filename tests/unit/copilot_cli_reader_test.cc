// GitHub Copilot CLI events -> pi sessions (docs/copilot-cli.md): how the
// reader bids, where --session finds a session's file, and the rules a
// recording alone does not pin down, each on a small hand-written events file.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <rapidjson/document.h>
#include <boost/filesystem.hpp>

#include "common/converted_session.h"
#include "readers/readers.h"

namespace pihydrate {
namespace {

using test_support::Converted;
using test_support::entries_of;
using test_support::format_of;
using test_support::texts_of;

Converted convert(const std::string& events) {
  Converted out;
  out.session = convert_copilot_cli(events, "events.jsonl", out);
  return out;
}

// One event: its type, its data, and the chain (each names the event before it, as the CLI writes).
class Events {
 public:
  Events& add(const std::string& type, const std::string& data, const std::string& extra = "") {
    const std::string id = "e" + std::to_string(++n_);
    text_ += R"({"type":")" + type + R"(","data":)" + data + R"(,"id":")" + id +
             R"(","timestamp":"2026-11-28T08:56:4)" + std::to_string(n_ % 10) + R"(.000Z","parentId":)" +
             (last_.empty() ? "null" : "\"" + last_ + "\"") + extra + "}\n";
    last_ = id;
    return *this;
  }
  Events& start() {
    return add(
        "session.start",
        R"({"sessionId":"470297f4-f771-48e5-88f3-8cf9be583ff0","version":1,"producer":"copilot-agent",)"
        R"("copilotVersion":"1.0.102","startTime":"2026-11-28T08:56:48.751Z","selectedModel":"claude-sonnet-4.5",)"
        R"("context":{"cwd":"/home/me/repo"}})");
  }
  Events& user(const std::string& text) {
    return add("user.message", R"({"content":")" + text +
                                   R"(","transformedContent":"<current_datetime>x</current_datetime>\n\n)" + text +
                                   R"("})");
  }
  Events& reply(const std::string& text, const std::string& calls = "", const std::string& more = "") {
    return add("assistant.message", R"({"messageId":"m)" + std::to_string(n_) +
                                        R"(","model":"claude-sonnet-4.5","content":")" + text +
                                        R"(","toolRequests":[)" + calls + "]" + more + "}");
  }
  Events& result(const std::string& call, const std::string& content, int exit_code, bool success = true) {
    return add("tool.execution_complete", R"({"toolCallId":")" + call + R"(","success":)" +
                                              (success ? "true" : "false") + R"(,"shellExecution":{"exitCode":)" +
                                              std::to_string(exit_code) + R"(},"result":{"content":")" + content +
                                              R"("}})");
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_, last_;
  int n_ = 0;
};

std::string call(const std::string& id, const std::string& command) {
  return R"({"toolCallId":")" + id + R"(","name":"bash","arguments":{"command":")" + command + R"("}})";
}

TEST(CopilotCliReader, BidsOnItsSessionStartAlone) {
  EXPECT_EQ(format_of(Events().start().text()), "copilot-cli");
  // Another tool's event with the same type name, without the CLI's version: not Copilot's.
  EXPECT_EQ(format_of(R"({"type":"session.start","data":{"sessionId":"s"}})"), "none");
}

TEST(CopilotCliReader, WritesTheTextTheCliSentAndLeavesItsOwnEventsOut) {
  // CP3, CP4, CP5: the system prompt and turn markers are not written; the user's text is the one sent.
  Events ev;
  ev.start().user("hi").add("system.message", R"({"role":"system","content":"You are Copilot."})");
  ev.add("assistant.turn_start", R"({"turnId":"0"})").reply("hello").add("assistant.turn_end", R"({"turnId":"0"})");
  Converted s = convert(ev.text());
  ASSERT_TRUE(s.ok()) << s.diagnostics.size();
  EXPECT_EQ(texts_of(s), (std::vector<std::string>{"session", "user:<current_datetime>x</current_datetime>\n\nhi",
                                                   "assistant:hello"}));
  EXPECT_EQ(s.repairs["copilot-cli-system-prompts"], 1u);
  EXPECT_EQ(s.repairs["copilot-cli-bookkeeping-events"], 3u);  // session.start, turn_start, turn_end
  const auto entries = entries_of(s);
  EXPECT_STREQ(entries[0]["id"].GetString(), "470297f4-f771-48e5-88f3-8cf9be583ff0");
  EXPECT_STREQ(entries[0]["cwd"].GetString(), "/home/me/repo");
}

TEST(CopilotCliReader, AShellCommandThatExitsNonZeroIsAFailedResult) {
  // CP9: success: true with exit code 1 is a failure; the text (and its trailer) is kept.
  Events ev;
  ev.start().user("show it").reply("", call("toolu_1", "cat missing.txt"));
  ev.result("toolu_1", "cat: missing.txt: No such file\\n<shellId: 0 completed with exit code 1>", 1);
  ev.reply("", call("toolu_2", "true")).result("toolu_2", "<shellId: 0 completed with exit code 0>", 0);
  ev.reply("", call("toolu_3", "x"))
      .add("tool.execution_complete", R"({"toolCallId":"toolu_3","success":false,"error":{"message":"denied"}})");
  Converted s = convert(ev.text());
  ASSERT_TRUE(s.ok());
  const auto entries = entries_of(s);
  std::vector<std::pair<std::string, bool>> results;
  for (const auto& e : entries)
    if (e.HasMember("message") && std::string(e["message"]["role"].GetString()) == "toolResult")
      results.emplace_back(e["message"]["content"][0]["text"].GetString(), e["message"]["isError"].GetBool());
  ASSERT_EQ(results.size(), 3u);
  EXPECT_TRUE(results[0].second);
  EXPECT_NE(results[0].first.find("exit code 1>"), std::string::npos);
  EXPECT_FALSE(results[1].second);
  EXPECT_EQ(results[2], (std::pair<std::string, bool>{"denied", true}));
}

TEST(CopilotCliReader, TheExitCodeTrailerCountsWithoutShellExecution) {
  Events ev;
  ev.start().user("go").reply("", call("toolu_1", "false"));
  ev.add("tool.execution_complete",
         R"({"toolCallId":"toolu_1","success":true,"result":{"content":"<shellId: 0 completed with exit code 2>\n"}})");
  Converted s = convert(ev.text());
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(entries_of(s).back()["message"]["isError"].GetBool());
}

TEST(CopilotCliReader, SignedAnthropicThinkingKeepsItsSignature) {
  // CP6, CP7: the blocks as the API sent them, signature and redacted data kept; api and provider from the usage
  // record.
  Events ev;
  ev.start().user("6 x 7?");
  ev.add(
      "session.usage_record",
      R"({"usage":{"inputTokens":100,"outputTokens":7,"cacheReadTokens":60,"cacheWriteTokens":10,"isByok":true,"providerType":"anthropic"}})");
  ev.reply(
      "42.", "",
      R"(,"reasoningText":"six sevens","reasoningOpaque":"sig-1","reasoningBlocks":{"provider":"anthropic-messages",)"
      R"("blocks":[{"type":"thinking","thinking":"six sevens","signature":"sig-1"},{"type":"redacted_thinking","data":"opaque"}]})");
  Converted s = convert(ev.text());
  ASSERT_TRUE(s.ok());
  const auto entries = entries_of(s);
  const auto& m = entries.back()["message"];
  ASSERT_EQ(m["content"].Size(), 3u);
  EXPECT_STREQ(m["content"][0]["thinkingSignature"].GetString(), "sig-1");
  EXPECT_TRUE(m["content"][1]["redacted"].GetBool());
  EXPECT_STREQ(m["content"][1]["thinkingSignature"].GetString(), "opaque");
  EXPECT_STREQ(m["content"][2]["text"].GetString(), "42.");
  EXPECT_STREQ(m["api"].GetString(), "anthropic-messages");
  EXPECT_STREQ(m["provider"].GetString(), "anthropic");
  EXPECT_EQ(m["usage"]["input"].GetUint64(), 30u);
  EXPECT_EQ(m["usage"]["cacheRead"].GetUint64(), 60u);
}

TEST(CopilotCliReader, ReasoningWithoutAnthropicsWireIsNotSignedAndEncryptedReasoningIsCounted) {
  Events ev;
  ev.start().user("hi");
  ev.add("session.usage_record", R"({"usage":{"inputTokens":1,"outputTokens":1,"isByok":false}})");
  ev.reply("hello", "", R"(,"reasoningText":"think","reasoningOpaque":"x","encryptedContent":"enc")");
  Converted s = convert(ev.text());
  ASSERT_TRUE(s.ok());
  const auto entries = entries_of(s);
  const auto& m = entries.back()["message"];
  EXPECT_FALSE(m["content"][0].HasMember("thinkingSignature"));
  EXPECT_STREQ(m["provider"].GetString(), "github-copilot");
  EXPECT_EQ(s.repairs["copilot-cli-encrypted-reasoning"], 1u);
}

TEST(CopilotCliReader, ChunksOfOneModelCallAreOneMessage) {
  // CP6: the same apiCallId, one after another.
  Events ev;
  ev.start()
      .user("go")
      .reply("part one", "", R"(,"apiCallId":"msg_1")")
      .reply("part two", call("toolu_1", "ls"), R"(,"apiCallId":"msg_1")");
  ev.result("toolu_1", "a", 0).reply("done", "", R"(,"apiCallId":"msg_2")");
  Converted s = convert(ev.text());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(texts_of(s),
            (std::vector<std::string>{"session", "user:<current_datetime>x</current_datetime>\n\ngo",
                                      "assistant:part onepart two[toolCall]", "toolResult:a", "assistant:done"}));
}

TEST(CopilotCliReader, SubagentEventsAreLeftOutAndItsAnswerIsTheTaskResult) {
  // CP11
  Events ev;
  ev.start().user("use a subagent").reply("", R"({"toolCallId":"toolu_1","name":"task","arguments":{"prompt":"p"}})");
  ev.add("user.message", R"({"content":"p"})", R"(,"agentId":"a1")");
  ev.add("assistant.message", R"({"messageId":"x","content":"sub answer"})", R"(,"agentId":"a1")");
  ev.result("toolu_1", "sub answer", 0).reply("it said so");
  Converted s = convert(ev.text());
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(texts_of(s).size(), 5u);
  EXPECT_EQ(s.repairs["copilot-cli-subagent-events"], 2u);
}

TEST(CopilotCliReader, ACompactionIsASummaryAndAClearStartsAgain) {
  // CP12
  Events ev;
  ev.start().user("one").reply("1");
  ev.add("session.compaction_complete", R"({"success":true,"summaryContent":"we counted","preCompactionTokens":900})");
  ev.user("two").reply("2");
  Converted s = convert(ev.text());
  ASSERT_TRUE(s.ok());
  const auto entries = entries_of(s);
  ASSERT_EQ(entries.size(), 6u);
  EXPECT_STREQ(entries[3]["type"].GetString(), "compaction");
  EXPECT_STREQ(entries[3]["firstKeptEntryId"].GetString(), entries[3]["id"].GetString());
  EXPECT_EQ(entries[3]["tokensBefore"].GetUint64(), 900u);

  Events cleared;
  cleared.start().user("one").reply("1").add("session.context_cleared", R"({"messagesCleared":2})").user("two");
  Converted c = convert(cleared.text());
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(texts_of(c).size(), 2u);
  EXPECT_EQ(c.repairs["copilot-cli-cleared-messages"], 2u);
}

TEST(CopilotCliReader, ImagesComeFromTheirAssetEvents) {
  // CP8: an attachment names an asset written once, earlier in the file.
  Events ev;
  ev.start().add("session.binary_asset",
                 R"({"assetId":"sha256:a","type":"image","mimeType":"image/png","data":"iVBORw0="})");
  ev.add(
      "user.message",
      R"({"content":"look","attachments":[{"type":"file","path":"/p.png","mimeType":"image/png","assetId":"sha256:a"},)"
      R"({"type":"blob","mimeType":"image/png","omittedReason":"too_large"}]})");
  ev.reply("a pixel");
  Converted s = convert(ev.text());
  ASSERT_TRUE(s.ok());
  const auto entries = entries_of(s);
  const auto& content = entries[1]["message"]["content"];
  ASSERT_EQ(content.Size(), 2u);
  EXPECT_STREQ(content[1]["data"].GetString(), "iVBORw0=");
  EXPECT_EQ(s.repairs["copilot-cli-attachments-dropped"], 1u);
}

TEST(CopilotCliReader, ABrokenChainIsWarnedOnceAndTheFileOrderKept) {
  // CP2: a parentId naming itself or a later event cannot loop the conversation.
  std::string text = Events().start().user("one").reply("1").text();
  text +=
      R"({"type":"user.message","data":{"content":"two"},"id":"x","timestamp":"2026-11-28T08:57:00.000Z","parentId":"x"})"
      "\n";
  text += R"({"type":"assistant.message","data":{"messageId":"y","content":"2"},"id":"y","parentId":"z"})"
          "\n";
  Converted s = convert(text);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(texts_of(s).size(), 5u);
  EXPECT_EQ(s.repairs["copilot-cli-chain-breaks"], 2u);
}

TEST(CopilotCliReader, BadInputIsAnErrorAtItsPlace) {
  Converted not_json = convert(Events().start().text() + "{\"type\":\n");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.diagnostics[0].line, 2u);
  Converted not_start = convert(R"({"type":"user.message","data":{"content":"hi"},"id":"a","parentId":null})"
                                "\n");
  ASSERT_FALSE(not_start.ok());
  Converted empty = convert(Events().start().add("session.shutdown", "{}").text());
  ASSERT_FALSE(empty.ok());
  // A last line cut off mid-write is left out with a warning.
  Converted cut = convert(Events().start().user("hi").reply("hello").text() + R"({"type":"assistant.mes)");
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut.repairs["truncated-last-line"], 1u);
}

TEST(CopilotCliReader, SessionFileIsTheArgumentAFolderOrAnIdUnderCopilotHome) {
  namespace fs = boost::filesystem;
  const fs::path root = fs::temp_directory_path() / fs::unique_path("copilot-home-%%%%%%%%");
  const fs::path folder = root / "session-state" / "470297f4";
  fs::create_directories(folder);
  std::ofstream((folder / "events.jsonl").string()) << Events().start().text();
  const std::string events = (folder / "events.jsonl").string();
  EXPECT_EQ(copilot_cli_session_file(events, nullptr, nullptr), events);
  EXPECT_EQ(copilot_cli_session_file(folder.string(), nullptr, nullptr), events);
  EXPECT_EQ(copilot_cli_session_file(folder.string() + "/", nullptr, nullptr), events);
  EXPECT_EQ(copilot_cli_session_file("470297f4", root.string().c_str(), nullptr), events);
  // Not an id it holds, a path, or a folder without events: the argument as given.
  EXPECT_EQ(copilot_cli_session_file("other", root.string().c_str(), nullptr), "other");
  EXPECT_EQ(copilot_cli_session_file("-", root.string().c_str(), nullptr), "-");
  EXPECT_EQ(copilot_cli_session_file(root.string(), nullptr, nullptr), root.string());
  fs::remove_all(root);
}

}  // namespace
}  // namespace pihydrate
