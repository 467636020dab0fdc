// Gemini CLI chat logs -> pi sessions (docs/gemini-cli.md): how the reader
// bids, and the rules a recording alone does not pin down (the replay, the
// duplicated results, failed commands), each on a small hand-written log.
#include <sstream>

#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include "common/converted_session.h"
#include "readers/readers.h"

namespace pihydrate {
namespace {

using test_support::Converted;
using test_support::entries_of;
using test_support::role_of;

Converted convert(const std::string& chat) {
  Converted out;
  out.session = convert_gemini_cli(chat, "session.jsonl", out);
  return out;
}

// The first block's text (or thinking) of entry `e`.
std::string first_text(const rapidjson::Document& e) {
  const auto& b = e["message"]["content"][0];
  return b.HasMember("text") ? b["text"].GetString() : b["thinking"].GetString();
}

const std::string kHeader =
    R"({"sessionId":"9d0e962e-8d6f","projectHash":"00e2","startTime":"2026-11-28T06:07:22.028Z","lastUpdated":"2026-11-28T06:07:22.028Z","kind":"main"})"
    "\n";
const std::string kContext =
    R"({"id":"ctx","timestamp":"2026-11-28T06:07:22.028Z","type":"user","content":[{"text":"<session_context>\nThis is the Gemini CLI.\n- **Workspace Directories:**\n  - /home/me/repo\n- **Directory Structure:**\n</session_context>"}]})";

std::string user(const std::string& id, const std::string& text) {
  return R"({"id":")" + id + R"(","timestamp":"2026-11-28T06:07:23.000Z","type":"user","content":[{"text":")" + text +
         R"("}]})";
}
std::string answer(const std::string& id, const std::string& text) {
  return R"({"id":")" + id + R"(","timestamp":"2026-11-28T06:07:24.000Z","type":"gemini","content":")" + text +
         R"(","thoughts":[],"model":"gemini-2.5-pro"})";
}
std::string response(const std::string& call, const std::string& output) {
  return R"({"functionResponse":{"id":")" + call + R"(","name":"run_shell_command","response":{"output":")" + output +
         R"("}}})";
}
// A gemini message with one shell call and its result, as the CLI writes it once the call ran.
std::string call_message(const std::string& id, const std::string& call, const std::string& output) {
  return R"({"id":")" + id +
         R"(","timestamp":"2026-11-28T06:07:24.000Z","type":"gemini","content":"Let me look.","thoughts":[{"subject":"Reading","description":"the notes"}],"tokens":{"input":162,"output":10,"cached":100,"thoughts":6},"model":"gemini-2.5-pro","toolCalls":[{"id":")" +
         call + R"(","name":"run_shell_command","args":{"command":"cat notes.txt"},"result":[)" +
         response(call, output) + R"(],"status":"success"}]})";
}

std::string format_of(const std::string& head) {
  const Reader* r = ReaderRegistry::standard().choose(make_input_head(head, true));
  return r == nullptr ? "none" : r->info().name;
}

TEST(GeminiCli, FoundByItsHeaderOrItsOlderWholeFile) {
  EXPECT_EQ(format_of(kHeader), "gemini-cli");
  EXPECT_EQ(format_of("{\n  \"sessionId\": \"s\",\n  \"projectHash\": \"h\",\n  \"messages\": []\n}\n"), "gemini-cli");
  EXPECT_EQ(format_of(R"({"sessionId":"s","type":"user","uuid":"u"})"), "claude-code");
  EXPECT_EQ(format_of(R"({"sessionId":"s"})"), "none");
  EXPECT_EQ(format_of("{\n  \"sessionId\": \"s\"\n}\n"), "none");  // no projectHash: not a Gemini CLI file
}

// G1, G4, G11: a message written again replaces its first version in place;
// the CLI's preamble is left out, its directory kept as the cwd.
TEST(GeminiCli, ALaterVersionOfAMessageReplacesTheFirstInItsPlace) {
  std::string chat = kHeader + kContext + "\n" + user("u1", "What do my notes say?") + "\n" +
                     R"({"$set":{"lastUpdated":"x"}})" + "\n" + answer("g1", "draft") + "\n" + user("u2", "And then?") +
                     "\n" + answer("g1", "Final answer.") + "\n";
  const Converted s = convert(chat);
  ASSERT_TRUE(s.ok());
  const auto e = entries_of(s);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_STREQ(e[0]["cwd"].GetString(), "/home/me/repo");
  EXPECT_STREQ(e[0]["id"].GetString(), "9d0e962e-8d6f");
  EXPECT_EQ(first_text(e[1]), "What do my notes say?");
  EXPECT_EQ(role_of(e[2]), "assistant");
  EXPECT_EQ(first_text(e[2]), "Final answer.");
  EXPECT_EQ(first_text(e[3]), "And then?");
  EXPECT_EQ(s.repairs.at("gemini-cli-session-context-dropped"), 1u);
  EXPECT_STREQ(e[2]["parentId"].GetString(), e[1]["id"].GetString());
}

// G1: $rewindTo drops the message and all after it; a $set of messages replaces the list.
TEST(GeminiCli, RewindsAndListsReplaceWhatCameBefore) {
  std::string chat = kHeader + user("u1", "one") + "\n" + answer("g1", "first") + "\n" + user("u2", "two") + "\n" +
                     answer("g2", "second") + "\n" + R"({"$rewindTo":"u2"})" + "\n" + user("u3", "three") + "\n";
  Converted s = convert(chat);
  ASSERT_TRUE(s.ok());
  auto e = entries_of(s);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_EQ(first_text(e[3]), "three");
  EXPECT_EQ(s.repairs.at("gemini-cli-rewinds"), 1u);

  chat += R"({"$set":{"messages":[)" + user("u9", "only this") + "]}}\n" + answer("g9", "and this") + "\n";
  s = convert(chat);
  ASSERT_TRUE(s.ok());
  e = entries_of(s);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(first_text(e[1]), "only this");
  EXPECT_EQ(first_text(e[2]), "and this");

  // A rewind to an id not in the list empties it: nothing is left to write.
  s = convert(chat + R"({"$rewindTo":"nowhere"})" + "\n");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.diagnostics[0].message.find("no conversation"), std::string::npos);
}

// G7: the CLI writes each result in the call's record and in a user
// message; after a resume's rewrite, twice as user messages. One comes over.
TEST(GeminiCli, EachCallGetsExactlyOneResult) {
  const std::string call = "run_shell_command__run_shell_command_1_0";
  std::string chat = kHeader + user("u1", "Read it") + "\n" + call_message("g1", call, "Output: hello") + "\n" +
                     R"({"id":"r1","type":"user","content":[)" + response(call, "Output: hello") + "]}\n" +
                     answer("g2", "It says hello.") + "\n";
  Converted s = convert(chat);
  ASSERT_TRUE(s.ok());
  auto e = entries_of(s);
  ASSERT_EQ(e.size(), 5u);  // header, user, assistant, result, answer
  EXPECT_EQ(role_of(e[3]), "toolResult");
  EXPECT_STREQ(e[3]["message"]["toolCallId"].GetString(), call.c_str());
  EXPECT_STREQ(e[3]["message"]["toolName"].GetString(), "run_shell_command");
  EXPECT_FALSE(e[3]["message"]["isError"].GetBool());
  EXPECT_EQ(s.repairs.at("gemini-cli-duplicate-results"), 1u);
  // G5, G6: thoughts first, then the text, then the call; usage from the tokens.
  const auto& a = e[2]["message"];
  ASSERT_EQ(a["content"].Size(), 3u);
  EXPECT_STREQ(a["content"][0]["thinking"].GetString(), "**Reading** the notes");
  EXPECT_STREQ(a["content"][2]["type"].GetString(), "toolCall");
  EXPECT_STREQ(a["content"][2]["arguments"]["command"].GetString(), "cat notes.txt");
  EXPECT_EQ(a["usage"]["input"].GetUint64(), 62u);
  EXPECT_EQ(a["usage"]["cacheRead"].GetUint64(), 100u);
  EXPECT_EQ(a["usage"]["output"].GetUint64(), 16u);
  EXPECT_STREQ(a["stopReason"].GetString(), "toolUse");

  // The list as the CLI rewrites it on resume: the API's parts, the result twice.
  chat +=
      R"({"$set":{"messages":[)" + user("u1", "Read it") +
      R"(,{"id":"g1","type":"gemini","content":[{"text":"Reading","thought":true},{"text":"Let me look."},{"functionCall":{"id":")" +
      call + R"(","name":"run_shell_command","args":{"command":"cat notes.txt"}}}]},)" +
      R"({"id":"g1_response","type":"user","content":[)" + response(call, "Output: hello") + "]}," +
      R"({"id":"r1","type":"user","content":[)" + response(call, "Output: hello") + "]}," +
      answer("g2", "It says hello.") + "]}}\n";
  s = convert(chat);
  ASSERT_TRUE(s.ok());
  e = entries_of(s);
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(role_of(e[3]), "toolResult");
  EXPECT_EQ(role_of(e[4]), "assistant");
  EXPECT_STREQ(e[2]["message"]["content"][0]["type"].GetString(), "thinking");
  EXPECT_STREQ(e[2]["message"]["model"].GetString(), "gemini-2.5-pro");  // from the message's earlier version
}

// G8: a failed command is "success" to the CLI, with the exit code in the
// trailer it adds; only that trailer counts.
TEST(GeminiCli, AFailedCommandIsAnErrorByItsExitCode) {
  const std::string failed =
      R"(<untrusted_context>\nOutput: cat: missing.txt: No such file or directory\nExit Code: 1\nProcess Group PGID: 7\n</untrusted_context>)";
  const std::string printed = R"(Output: Exit Code: 3\nall fine\nProcess Group PGID: 7)";
  for (const auto& [output, error] : {std::pair{failed, true}, std::pair{printed, false}}) {
    const std::string chat =
        kHeader + user("u1", "Read it") + "\n" + call_message("g1", "c1", output) + "\n" + answer("g2", "Done.") + "\n";
    const Converted s = convert(chat);
    ASSERT_TRUE(s.ok());
    const auto e = entries_of(s);
    ASSERT_EQ(role_of(e[3]), "toolResult");
    EXPECT_EQ(e[3]["message"]["isError"].GetBool(), error) << output;
  }
}

// G3, G4: notices, commands and hook output never reach the model.
TEST(GeminiCli, NoticesAndCommandsAreLeftOutAndCounted) {
  const std::string chat = kHeader + user("u0", "/stats") + "\n" + user("u1", "Hi") + "\n" +
                           R"({"id":"i1","type":"info","content":"Chat history compressed."})" + "\n" +
                           R"({"id":"w1","type":"warning","content":"careful"})" + "\n" +
                           user("h1", "<hook_context>from a hook</hook_context>") + "\n" + answer("g1", "Hello.") +
                           "\n";
  const Converted s = convert(chat);
  ASSERT_TRUE(s.ok());
  const auto e = entries_of(s);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(s.repairs.at("gemini-cli-notices-dropped"), 2u);
  EXPECT_EQ(s.repairs.at("gemini-cli-commands-dropped"), 1u);
  EXPECT_EQ(s.repairs.at("gemini-cli-hook-context-dropped"), 1u);
  EXPECT_STREQ(e[0]["cwd"].GetString(), "/");  // no preamble, no directories: the root
}

// Reading: a BOM, CRLF endings and blank lines, as in every JSONL input.
TEST(GeminiCli, ByteOrderMarkCrlfAndBlankLinesAreTolerated) {
  std::string chat = "\xEF\xBB\xBF" + kHeader.substr(0, kHeader.size() - 1) + "\r\n\r\n" + user("u1", "Hi") + "\r\n" +
                     answer("g1", "Hello.") + "\r\n";
  const Converted s = convert(chat);
  ASSERT_TRUE(s.ok()) << s.diagnostics[0].message;
  const auto e = entries_of(s);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(first_text(e[2]), "Hello.");
}

// G12: an older session-*.json, one pretty-printed object.
TEST(GeminiCli, AnOlderWholeFileIsReadToo) {
  const std::string legacy =
      "{\n  \"sessionId\": \"old\",\n  \"projectHash\": \"h\",\n  \"startTime\": "
      "\"2026-01-01T00:00:00.000Z\",\n  \"messages\": [\n    " +
      user("u1", "Hi") + ",\n    " + answer("g1", "Hello.") + "\n  ]\n}\n";
  const Converted s = convert(legacy);
  ASSERT_TRUE(s.ok());
  const auto e = entries_of(s);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_STREQ(e[0]["id"].GetString(), "old");
  EXPECT_EQ(first_text(e[2]), "Hello.");
}

// Reading: a broken record is an error at its line:column, a cut-off last
// line a warning, a log without a header an error.
TEST(GeminiCli, BrokenLogsAreErrorsAtTheirPlace) {
  Converted s = convert(kHeader + "{\"id\": oops}\n" + user("u1", "Hi") + "\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.diagnostics[0].line, 2u);
  EXPECT_EQ(s.diagnostics[0].column, 8u);

  s = convert(kHeader + user("u1", "Hi") + "\n" + "{\"id\":\"g1\",\"type\":\"gem");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.repairs.at("truncated-last-line"), 1u);

  s = convert(user("u1", "Hi") + "\n");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.diagnostics[0].message.find("starts with its header"), std::string::npos);
  EXPECT_EQ(s.diagnostics[0].line, 1u);

  s = convert(kHeader + "[1,2]\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.diagnostics[0].line, 2u);

  // A line that is a bare string, alone or with more after it (the skim once read past its stack here: fuzzing).
  s = convert(kHeader + "\"x\"\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.diagnostics[0].line, 2u);
  EXPECT_NE(s.diagnostics[0].message.find("a record is a JSON object"), std::string::npos);
  s = convert(kHeader + R"(":"0.169.0","source":"exec"})" + "\n");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.diagnostics[0].line, 2u);
  EXPECT_NE(s.diagnostics[0].message.find("not JSON"), std::string::npos);

  // Wrong types are left out with a warning, never a crash.
  s = convert(kHeader + user("u1", "Hi") + "\n" +
              R"({"id":"g1","type":"gemini","content":7,"toolCalls":"x","thoughts":{}})" + "\n" +
              R"({"id":"u2","type":"user","content":{"a":1}})" + "\n" + R"({"id":"u3","type":42})" + "\n" +
              R"({"$set":{"messages":"no"}})" + "\n" + answer("g2", "ok") + "\n");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s.repairs.at("gemini-cli-empty-gemini-messages"), 1u);
  EXPECT_EQ(s.repairs.at("gemini-cli-messages-dropped"), 2u);
}

}  // namespace
}  // namespace pihydrate

namespace pihydrate {
namespace {

// G1, G2, G5, G11: the first pass reads a record's kind and a message's short
// fields by skimming its line; what it reads is what the record's Document
// says, for repeated keys (the last counts), values of other types, and
// counts that are no uint64.
TEST(GeminiCli, SkimmedRecordsReadAsTheirDocuments) {
  const std::string chat =
      R"({"sessionId":"s","projectHash":"h","startTime":7,"startTime":"2026-11-28T06:07:22.028Z","kind":"subagent","directories":[1,"/no"],"directories":["/d\u0000x","/e"]})"
      "\n" +
      kContext + "\n" + user("u1", "Hello") + "\n" +
      R"({"id":"g1","timestamp":null,"type":"gemini","content":"Hi","model":"m1","model":"m2","tokens":{"input":9},"tokens":{"input":1.5,"output":-3,"cached":7,"thoughts":2,"thoughts":{}}})"
      "\n" +
      R"({"id":5,"$set":{"kind":"x","kind":3,"directories":[],"directories":["/s"]}})"
      "\n" +
      R"({"id":"g1","type":"gemini","content":"Hi again","model":"","tokens":{"input":18446744073709551615}})"
      "\n" +
      R"({"$rewindTo":3,"id":"u2","timestamp":"2026-11-28T06:07:25.000Z","type":"user","content":"More"})"
      "\n" +
      R"({"id":"g2","timestamp":"2026-11-28T06:07:26.000Z","type":"gemini","content":"Sure","tokens":[1]})"
      "\n" +
      R"({"$set":[],"sessionId":"s","projectHash":"h","messages":{}})"
      "\n" +
      R"({"foo":{"id":"x"},"$set":"no","$rewindTo":null})"
      "\n" +
      R"({"id":"g3","type":"gemini","content":"Later","model":"m3"})"
      "\n" +
      R"({"$rewindTo":"g3"})"
      "\n";
  const Converted skimmed = convert(chat), parsed = convert(test_support::with_escaped_keys(chat));
  ASSERT_TRUE(skimmed.ok());
  EXPECT_EQ(test_support::everything_of(skimmed), test_support::everything_of(parsed));
  EXPECT_NE(skimmed.session.find(R"("model":"m2")"), std::string::npos);
  EXPECT_EQ(skimmed.session.find("Later"), std::string::npos);
}

}  // namespace
}  // namespace pihydrate
