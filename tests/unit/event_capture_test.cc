// Event capture -> thread export (docs/events.md): one test per rule E1-E12
// and per tolerated oddity, and through hydrate_events: diagnostics at the
// capture's line:column, nothing written for a capture without a conversation.
#include "readers/event_capture.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <rapidjson/document.h>
#include "common/text_files.h"

#include "pihydrate/pihydrate.h"

namespace pihydrate {
namespace {

const std::string kHeader =
    R"({"type":"session","version":3,"id":"01a2167c-9cba-725c-a6e0-f62af6057cb4","timestamp":"2026-11-26T06:13:15.067Z","cwd":"/box"})";
const std::string kUser = R"({"type":"message_end","message":{"role":"user","content":"Hi \u00e9","timestamp":1000}})";
const std::string kAssistantMessage =
    R"({"role":"assistant","content":[{"type":"text","text":"Hello."}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":1,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":2,"cost":{"input":1.0e-6,"output":0,"cacheRead":0,"cacheWrite":0,"total":1.0e-6}},"stopReason":"stop","timestamp":2000})";
const std::string kAssistant = R"({"type":"message_end","message":)" + kAssistantMessage + "}";

EventCapture convert(std::string text) { return convert_event_capture(text, "c.jsonl"); }

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

rapidjson::Document parse(const std::string& line) {
  rapidjson::Document d;
  d.Parse(line.c_str());
  EXPECT_FALSE(d.HasParseError()) << line;
  return d;
}

std::string kind_of(const std::string& line) { return parse(line)["kind"].GetString(); }

std::string codes(const Diagnostics& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics)
    out += code_name(d.code) + "@" + std::to_string(d.line) + ":" + std::to_string(d.column) + " ";
  return out;
}

// E1: framing.
TEST(EventCaptureE1, BlankLinesBomAndCrlfAreTolerated) {
  const EventCapture c = convert("\xEF\xBB\xBF" + kHeader + "\r\n\r\n   \n" + kUser + "\r\n" + kAssistant + "\n");
  ASSERT_TRUE(c.ok()) << codes(c.diagnostics);
  EXPECT_TRUE(c.diagnostics.empty()) << codes(c.diagnostics);
  const auto lines = lines_of(c.thread);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(c.origins.at(1).line, 4u);
  EXPECT_EQ(c.origins.at(2).line, 5u);
  EXPECT_EQ(c.events, 3u);
}

TEST(EventCaptureE1, LinesThatAreNotJsonAreSkippedWithTheirPosition) {
  const EventCapture c = convert(kHeader + "\nnpm WARN something\n" + kUser + "\n[1,2]\n" + kAssistant +
                                 "\n{\"type\":\"message_end\",\"mess");
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c.diagnostics.size(), 3u) << codes(c.diagnostics);
  EXPECT_EQ(codes(c.diagnostics), "PH604@2:2 PH604@4:1 PH604@6:28 ");
  EXPECT_EQ(c.diagnostics[0].level, Level::kResume);  // the table's level (a skipped line changes the conversation)
  EXPECT_NE(c.diagnostics[2].message.find("not a JSON event"), std::string::npos);
  EXPECT_EQ(lines_of(c.thread).size(), 3u);
}

TEST(EventCaptureE1, AWrapperAroundTheEventIsTakenOff) {
  const EventCapture c = convert(R"({"ts":1,"event":)" + kUser + "}\n" + R"({"data":)" + kAssistant + "}\n");
  ASSERT_TRUE(c.ok()) << codes(c.diagnostics);
  const auto lines = lines_of(c.thread);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(kind_of(lines[1]), "pi.user");
  EXPECT_EQ(kind_of(lines[2]), "pi.assistant");
  EXPECT_EQ(c.origins.at(2).column, 9u);  // the inner object's first byte, after {"data":
}

TEST(EventCaptureE1, AnObjectWithoutATypeIsSkipped) {
  const EventCapture c = convert(kUser + "\n{\"hello\":1}\n");
  EXPECT_EQ(codes(c.diagnostics), "PH604@2:1 ");
}

// E2: the session.
TEST(EventCaptureE2, TheJsonHeaderGivesTheThread) {
  const EventCapture c = convert(kHeader + "\n" + kUser + "\n");
  const auto header = parse(lines_of(c.thread)[0]);
  EXPECT_STREQ(header["format"].GetString(), "thread-export");
  EXPECT_STREQ(header["thread"]["id"].GetString(), "01a2167c-9cba-725c-a6e0-f62af6057cb4");
  EXPECT_STREQ(header["thread"]["createdAt"].GetString(), "2026-11-26T06:13:15.067Z");
  EXPECT_STREQ(header["thread"]["cwd"].GetString(), "/box");
}

TEST(EventCaptureE2, AnRpcCaptureTakesTheIdFromGetState) {
  const EventCapture c =
      convert(R"({"id":"r","type":"response","command":"get_state","success":true,"data":{"sessionId":"s-1"}})"
              "\n" +
              kUser + "\n");
  EXPECT_STREQ(parse(lines_of(c.thread)[0])["thread"]["id"].GetString(), "s-1");
}

TEST(EventCaptureE2, WithoutAnIdOneIsDerivedFromTheBytes) {
  const EventCapture a = convert(kUser + "\n");
  const EventCapture b = convert(kUser + "\n");
  const EventCapture other = convert(kUser + "\n\n");
  const std::string id = parse(lines_of(a.thread)[0])["thread"]["id"].GetString();
  EXPECT_EQ(id.rfind("capture-", 0), 0u);
  EXPECT_EQ(id, parse(lines_of(b.thread)[0])["thread"]["id"].GetString());
  EXPECT_NE(id, parse(lines_of(other.thread)[0])["thread"]["id"].GetString());
}

TEST(EventCaptureE2, RunsOfTheSameSessionAreOneConversation) {
  const EventCapture c = convert(kHeader + "\n" + kUser + "\n" + kHeader + "\n" + kAssistant + "\n");
  ASSERT_TRUE(c.ok()) << codes(c.diagnostics);
  EXPECT_EQ(lines_of(c.thread).size(), 3u);
}

TEST(EventCaptureE2, AnotherSessionIsAnError) {
  std::string other = kHeader;
  other.replace(other.find("01a2167c"), 8, "99999999");
  const EventCapture c = convert(kHeader + "\n" + kUser + "\n" + other + "\n" + kAssistant + "\n");
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(codes(c.diagnostics), "PH603@3:1 ");
  EXPECT_TRUE(c.thread.empty());
}

TEST(EventCaptureE2, ASessionSwitchInRpcIsAnError) {
  const EventCapture c = convert(
      kUser + "\n" + R"({"type":"response","command":"new_session","success":true,"data":{"cancelled":false}})" + "\n" +
      kAssistant + "\n");
  EXPECT_EQ(codes(c.diagnostics), "PH603@2:1 ");
  const EventCapture cancelled = convert(
      kUser + "\n" + R"({"type":"response","command":"new_session","success":true,"data":{"cancelled":true}})" + "\n");
  EXPECT_TRUE(cancelled.ok());
}

// E3: messages, verbatim.
TEST(EventCaptureE3, MessagesAreCopiedByteForByte) {
  const std::string result =
      R"({"type":"message_end","message":{"role":"toolResult","toolCallId":"t1","toolName":"bash","content":[],"isError":false,"timestamp":3000}})";
  const EventCapture c = convert(kUser + "\n" + kAssistant + "\n" + result + "\n");
  const auto lines = lines_of(c.thread);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(kind_of(lines[1]), "pi.user");
  EXPECT_EQ(kind_of(lines[2]), "pi.assistant");
  EXPECT_EQ(kind_of(lines[3]), "pi.tool_result");
  EXPECT_NE(lines[1].find(R"("Hi \u00e9")"), std::string::npos);
  EXPECT_NE(lines[2].find(kAssistantMessage), std::string::npos);  // 1.0e-6 as written
}

// E4: the system prompt.
TEST(EventCaptureE4, TheSystemPromptIsDroppedAndCounted) {
  const EventCapture c =
      convert(R"({"type":"message_end","message":{"role":"system","content":"","sections":{"cwd":"<cwd>/x</cwd>"}}})"
              "\n" +
              kUser + "\n");
  EXPECT_EQ(lines_of(c.thread).size(), 2u);
  EXPECT_EQ(c.repairs.at("dropped-system-prompt"), 1u);
}

// E5: custom and bashExecution messages become what pi sends for them.
TEST(EventCaptureE5, ACustomMessageBecomesAUserMessage) {
  const EventCapture c = convert(
      R"({"type":"message_end","message":{"role":"custom","customType":"note","content":[{"type":"text","text":"N"}],"display":true,"timestamp":5}})"
      "\n");
  const auto line = lines_of(c.thread)[1];
  EXPECT_EQ(kind_of(line), "pi.user");
  const auto d = parse(line);
  EXPECT_STREQ(d["data"]["message"]["role"].GetString(), "user");
  EXPECT_STREQ(d["data"]["message"]["content"][0]["text"].GetString(), "N");
  EXPECT_EQ(d["data"]["message"]["timestamp"].GetInt(), 5);
  EXPECT_EQ(c.repairs.at("custom-as-user"), 1u);
}

TEST(EventCaptureE5, ABashExecutionBecomesPisText) {
  const EventCapture c = convert(
      kUser + "\n" +
      R"({"type":"message_end","message":{"role":"bashExecution","command":"make","output":"boom","exitCode":2,"cancelled":false,"truncated":false,"timestamp":7}})"
      "\n" +
      R"({"type":"message_end","message":{"role":"bashExecution","command":"ls","output":"","exitCode":0,"cancelled":false,"truncated":false,"excludeFromContext":true,"timestamp":8}})"
      "\n");
  const auto lines = lines_of(c.thread);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_STREQ(parse(lines[2])["data"]["message"]["content"][0]["text"].GetString(),
               "Ran `make`\n```\nboom\n```\n\nCommand exited with code 2");
  EXPECT_EQ(c.repairs.at("bash-execution-as-user"), 1u);
  EXPECT_EQ(c.repairs.at("bash-execution-excluded"), 1u);
}

TEST(EventCaptureE5, OtherRolesAreReported) {
  const EventCapture c =
      convert(kUser + "\n" + R"({"type":"message_end","message":{"role":"branchSummary","summary":"s"}})" + "\n");
  EXPECT_EQ(codes(c.diagnostics), "PH604@2:33 ");
}

// E6: RPC bash.
TEST(EventCaptureE6, AShellCommandWithItsLoggedCommandIsKept) {
  const EventCapture c = convert(
      kUser + "\n" + R"({"id":"b1","type":"bash","command":"echo hi"})" + "\n" +
      R"({"id":"b1","type":"response","command":"bash","success":true,"data":{"output":"hi\n","exitCode":0,"cancelled":false,"truncated":false}})" +
      "\n");
  const auto lines = lines_of(c.thread);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_STREQ(parse(lines[2])["data"]["message"]["content"][0]["text"].GetString(), "Ran `echo hi`\n```\nhi\n\n```");
  EXPECT_EQ(c.origins.at(2).line, 3u);
}

// The model saw the output of a command the capture does not hold: the
// output is kept, the command marked as not recorded, and the warning says so.
TEST(EventCaptureE6, AShellCommandWithoutItsCommandKeepsItsOutput) {
  const EventCapture c = convert(
      kUser + "\n" +
      R"({"id":"b1","type":"response","command":"bash","success":true,"data":{"output":"hi\n","exitCode":2}})" + "\n");
  EXPECT_EQ(codes(c.diagnostics), "PH604@2:1 ");
  EXPECT_EQ(c.repairs.at("bash-execution-without-command"), 1u);
  const auto lines = lines_of(c.thread);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_STREQ(parse(lines[2])["data"]["message"]["content"][0]["text"].GetString(),
               "Ran a shell command the capture did not record\n```\nhi\n\n```\n\nCommand exited with code 2");
  EXPECT_EQ(c.origins.at(2).line, 2u);
}

// E7: streams.
TEST(EventCaptureE7, AFinishedStreamGivesOnlyItsFinalMessage) {
  const EventCapture c = convert(
      kUser + "\n" + R"({"type":"message_start","message":{"role":"assistant","content":[],"timestamp":2000}})" + "\n" +
      R"({"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"Hel"}})" +
      "\n" + kAssistant + "\n");
  const auto lines = lines_of(c.thread);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(kind_of(lines[2]), "pi.assistant");
}

TEST(EventCaptureE7, ACutOffStreamBecomesChunks) {
  const std::string delta = R"({"type":"text_delta","contentIndex":0,"delta":"Hel"})";
  const EventCapture c = convert(
      kUser + "\n" + R"({"type":"message_start","message":{"role":"assistant","content":[],"timestamp":77}})" + "\n" +
      R"({"type":"message_update","usage":{},"assistantMessageEvent":)" + delta + "}\n" +
      R"({"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"lo"}})" +
      "\n");
  const auto lines = lines_of(c.thread);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(kind_of(lines[2]), "pi.chunk");
  EXPECT_EQ(kind_of(lines[3]), "pi.chunk");
  const auto chunk = parse(lines[2]);
  EXPECT_EQ(chunk["data"]["streamKey"].GetInt(), 77);  // its message_start's timestamp
  EXPECT_NE(lines[2].find(delta), std::string::npos);
  EXPECT_EQ(c.origins.at(2).line, 3u);
}

TEST(EventCaptureE7, AStreamCutOffByTheNextRunBecomesChunksThere) {
  const EventCapture c = convert(
      kHeader + "\n" + kUser + "\n" + R"({"type":"message_start","message":{"role":"assistant","content":[]}})" + "\n" +
      R"({"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"x"}})" + "\n" +
      kHeader + "\n" + kUser + "\n" + kAssistant + "\n");
  const auto lines = lines_of(c.thread);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(kind_of(lines[2]), "pi.chunk");
  EXPECT_FALSE(parse(lines[2])["data"].HasMember("streamKey"));  // no timestamp: a run (R6)
  EXPECT_EQ(kind_of(lines[3]), "pi.user");
}

TEST(EventCaptureE7, AStreamThatNeverStreamedIsReported) {
  const EventCapture c =
      convert(kUser + "\n" + R"({"type":"message_start","message":{"role":"assistant","content":[]}})" + "\n");
  EXPECT_EQ(codes(c.diagnostics), "PH604@2:1 ");
}

// E8: compactions.
TEST(EventCaptureE8, ACompactionWithAResultIsKeptVerbatim) {
  const std::string compaction =
      R"({"type":"compaction_end","reason":"manual","result":{"summary":"S","firstKeptEntryId":"ab12cd34","tokensBefore":99},"aborted":false,"willRetry":false})";
  const EventCapture c = convert(
      kUser + "\n" + kAssistant + "\n" + compaction + "\n" +
      R"({"type":"compaction_end","reason":"manual","aborted":false,"willRetry":false,"errorMessage":"Nothing to compact"})" +
      "\n");
  const auto lines = lines_of(c.thread);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(kind_of(lines[3]), "pi.compaction");
  EXPECT_NE(lines[3].find(R"("data":)" + compaction), std::string::npos);
}

// E8: pi 1.5's estimatedTokensAfter finds the kept window. Estimates are
// ceil(UTF-16 length / 4): "é" counts 1, so "Hi \u00e9" (4) is 1 token, the
// system prompt's 8 characters 2, the assistant's "Hello." 2, the summary "S" 1.
std::string compaction_after(std::uint64_t tokens) {
  return R"({"type":"compaction_end","reason":"manual","result":{"summary":"S","firstKeptEntryId":"ab12cd34","tokensBefore":99,"estimatedTokensAfter":)" +
         std::to_string(tokens) + R"(},"aborted":false,"willRetry":false})";
}
const std::string kSystem =
    R"({"type":"message_end","message":{"role":"system","content":"","sections":{"a":"12345678"}}})";
const std::string kResult =
    R"({"type":"message_end","message":{"role":"toolResult","toolCallId":"t1","toolName":"bash","content":[{"type":"text","text":"12345678"}],"isError":false,"timestamp":3}})";

TEST(EventCaptureE8, TheEstimateAfterACompactionFindsItsKeptWindow) {
  // system 2 + summary 1 + kept: assistant (line 5) 2 + tool result 2 + user (line 7) 1 = 8
  const EventCapture c = convert(kSystem + "\n" + kUser + "\n" + kAssistant + "\n" + kUser + "\n" + kAssistant + "\n" +
                                 kResult + "\n" + kUser + "\n" + compaction_after(8) + "\n");
  const auto lines = lines_of(c.thread);
  ASSERT_EQ(lines.size(), 8u);
  const auto compaction = parse(lines[7]);
  EXPECT_STREQ(compaction["data"]["firstKeptRef"].GetString(), "L5");
  EXPECT_STREQ(compaction["data"]["result"]["summary"].GetString(), "S");  // the event, still verbatim
  EXPECT_EQ(c.origins.at(7).input_copied_column, 2u);
}

TEST(EventCaptureE8, WithoutAnExactSingleMatchR9Decides) {
  const std::string messages = kSystem + "\n" + kUser + "\n" + kAssistant + "\n" + kUser + "\n" + kAssistant + "\n" +
                               kResult + "\n" + kUser + "\n";
  // 6 = system 2 + summary 1 + 3: the tool result and the user message, but
  // pi never starts a window at a tool result.
  for (std::uint64_t tokens : {6u, 7u, 100u}) {
    const EventCapture c = convert(messages + compaction_after(tokens) + "\n");
    EXPECT_FALSE(parse(lines_of(c.thread).back())["data"].HasMember("firstKeptRef")) << tokens;
  }
  const EventCapture no_estimate = convert(messages + R"({"type":"compaction_end","result":{"summary":"S"}})" + "\n");
  EXPECT_FALSE(parse(lines_of(no_estimate.thread).back())["data"].HasMember("firstKeptRef"));
}

TEST(EventCaptureE8, AWindowOfMessagesWithoutTokensIsAmbiguous) {
  const std::string empty_user = R"({"type":"message_end","message":{"role":"user","content":"","timestamp":1}})";
  // summary 1 + system 2 + the user message 1: the empty message before it adds 0 and is a cut point too.
  const EventCapture c =
      convert(kSystem + "\n" + kAssistant + "\n" + empty_user + "\n" + kUser + "\n" + compaction_after(4) + "\n");
  EXPECT_FALSE(parse(lines_of(c.thread).back())["data"].HasMember("firstKeptRef"));
}

// E9: the title.
TEST(EventCaptureE9, TheLastSessionNameIsTheTitle) {
  const EventCapture named = convert(R"({"type":"session_info_changed","name":"A"})"
                                     "\n" +
                                     kUser + "\n" + R"({"type":"session_info_changed","name":"B"})" + "\n");
  EXPECT_STREQ(parse(lines_of(named.thread)[0])["thread"]["title"].GetString(), "B");
  const EventCapture cleared = convert(R"({"type":"session_info_changed","name":"A"})"
                                       "\n" +
                                       kUser + "\n" + R"({"type":"session_info_changed"})" + "\n");
  EXPECT_FALSE(parse(lines_of(cleared.thread)[0])["thread"].HasMember("title"));
}

// E10: model and thinking level.
TEST(EventCaptureE10, TheLastModelAndThinkingLevelWin) {
  const EventCapture c = convert(
      R"({"type":"response","command":"get_state","success":true,"data":{"model":{"id":"m1","provider":"p1","api":"a1"},"thinkingLevel":"medium","sessionId":"s"}})"
      "\n" +
      kUser + "\n" +
      R"({"type":"response","command":"set_model","success":true,"data":{"id":"gpt-5","provider":"openai","api":"openai-responses"}})" +
      "\n" + R"({"type":"response","command":"set_model","success":false,"error":"Model not found"})" + "\n" +
      R"({"type":"thinking_level_changed","level":"low"})" + "\n");
  const auto header = parse(lines_of(c.thread)[0]);
  EXPECT_STREQ(header["thread"]["model"]["provider"].GetString(), "openai");
  EXPECT_STREQ(header["thread"]["model"]["modelId"].GetString(), "gpt-5");
  EXPECT_STREQ(header["thread"]["model"]["api"].GetString(), "openai-responses");
  EXPECT_STREQ(header["thread"]["thinkingLevel"].GetString(), "low");
}

TEST(EventCaptureE10, EntriesAppendedThatTheContextHasAreMapped) {
  const EventCapture c = convert(
      kUser + "\n" +
      R"({"type":"entry_appended","entry":{"type":"context_edit","id":"e1","parentId":"x","timestamp":"t","targetId":"y","replacement":null}})" +
      "\n" +
      R"({"type":"entry_appended","entry":{"type":"custom_message","id":"e2","customType":"c","content":"Note","display":false}})" +
      "\n" +
      R"({"type":"entry_appended","entry":{"type":"compaction","id":"e3","summary":"S","firstKeptEntryId":"y","tokensBefore":5}})" +
      "\n");
  const auto lines = lines_of(c.thread);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(kind_of(lines[2]), "pi.user");
  EXPECT_EQ(kind_of(lines[3]), "pi.compaction");
  EXPECT_STREQ(parse(lines[3])["data"]["result"]["summary"].GetString(), "S");
  EXPECT_EQ(c.repairs.at("ignored-entry-appended"), 1u);
}

// E11: what adds nothing.
TEST(EventCaptureE11, KnownEventsAreIgnoredAndUnknownOnesReportedOnce) {
  const EventCapture c =
      convert(kUser + "\n" + R"({"type":"agent_start"})" + "\n" + R"({"type":"tool_execution_end","toolCallId":"t"})" +
              "\n" + R"({"type":"brand_new"})" + "\n" + R"({"type":"brand_new"})" + "\n");
  EXPECT_EQ(codes(c.diagnostics), "PH604@4:1 ");
  EXPECT_EQ(c.events, 5u);
}

// E12: no conversation.
TEST(EventCaptureE12, ACaptureWithoutAConversationIsAnError) {
  for (const std::string& text : {std::string(""), std::string("\n\n"), std::string("error: no API key\n"),
                                  kHeader + "\n{\"type\":\"agent_start\"}\n"}) {
    const EventCapture c = convert(text);
    EXPECT_FALSE(c.ok()) << text;
    EXPECT_EQ(c.diagnostics.back().code, Code::kEventCaptureInvalid) << text;
  }
}

// Through the library: the thread path's findings at the capture's positions.
using test_support::TextSink;

HydrateResult hydrate(const std::string& capture, TextSink& sink, PartialPolicy partial = PartialPolicy::kDrop) {
  HydrateRequest request;
  request.cwd = "/tmp";
  request.partial = partial;
  return hydrate_events(Input::bytes(capture, "c.jsonl"), request, Output::lines(sink));
}

TEST(EventCaptureLibrary, AnInterruptedStreamIsReportedAtItsEvent) {
  TextSink sink;
  const HydrateResult r = hydrate(
      kHeader + "\n" + kUser + "\n" + R"({"type":"message_start","message":{"role":"assistant","content":[]}})" + "\n" +
          R"({"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"Hel"}})" +
          "\n",
      sink);
  ASSERT_TRUE(r.ok) << codes(r.report.diagnostics);
  ASSERT_EQ(r.report.diagnostics.size(), 1u);
  const Diagnostic& d = r.report.diagnostics[0];
  EXPECT_EQ(d.code, Code::kThreadEntrySkipped);
  EXPECT_EQ(d.line, 4u);
  EXPECT_EQ(d.file, "c.jsonl");
  EXPECT_EQ(d.message.rfind("message_update", 0), 0u) << d.message;
  EXPECT_EQ(r.report.entries_read, 4u);
}

TEST(EventCaptureLibrary, PartialKeepRebuildsTheCutOffMessage) {
  TextSink sink;
  const HydrateResult r = hydrate(
      kUser + "\n" + R"({"type":"message_start","message":{"role":"assistant","content":[]}})" + "\n" +
          R"({"type":"message_update","assistantMessageEvent":{"type":"text_delta","contentIndex":0,"delta":"Hel"}})" +
          "\n",
      sink, PartialPolicy::kText);
  ASSERT_TRUE(r.ok) << codes(r.report.diagnostics);
  EXPECT_NE(sink.text.find(R"("text":"Hel")"), std::string::npos) << sink.text;
}

TEST(EventCaptureLibrary, AnOrphanResultIsReportedAtItsLine) {
  TextSink sink;
  const HydrateResult r = hydrate(
      kUser + "\n\n" +
          R"({"type":"message_end","message":{"role":"toolResult","toolCallId":"t9","toolName":"bash","content":[{"type":"text","text":"x"}],"isError":false,"timestamp":3}})" +
          "\n",
      sink);
  ASSERT_TRUE(r.ok) << codes(r.report.diagnostics);
  ASSERT_EQ(r.report.diagnostics.size(), 1u) << codes(r.report.diagnostics);
  EXPECT_EQ(r.report.diagnostics[0].code, Code::kOrphanToolResult);
  EXPECT_EQ(r.report.diagnostics[0].line, 3u);
}

TEST(EventCaptureLibrary, AMessageTooDeepIsRefusedAtItsByte) {
  TextSink sink;
  const std::string deep = std::string(600, '[') + std::string(600, ']');
  const HydrateResult r = hydrate(R"({"type":"message_end","message":{"role":"user","content":)" + deep + "}}\n", sink);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.report.diagnostics.size(), 1u) << codes(r.report.diagnostics);
  const Diagnostic& d = r.report.diagnostics[0];
  EXPECT_EQ(d.code, Code::kThreadExportInvalid);
  EXPECT_EQ(d.line, 1u);
  EXPECT_GT(d.column, 55u);  // inside the copied message, not at the event's start
  EXPECT_EQ(d.message.rfind("message_end: invalid JSON", 0), 0u) << d.message;
}

TEST(EventCaptureLibrary, AFileAStreamAndBytesGiveTheSameSession) {
  const std::string path = std::string(PIHYDRATE_SOURCE_DIR) + "/tests/golden/events/json-two-runs/input.jsonl";
  std::ifstream file(path, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  HydrateRequest request;
  request.cwd = "/tmp";
  TextSink from_file, from_stream, from_bytes;
  std::istringstream stream(bytes.str());
  ASSERT_TRUE(hydrate_events(Input::file(path), request, Output::lines(from_file)).ok);
  ASSERT_TRUE(hydrate_events(Input::stream(stream), request, Output::lines(from_stream)).ok);
  ASSERT_TRUE(hydrate_events(Input::bytes(bytes.str()), request, Output::lines(from_bytes)).ok);
  EXPECT_EQ(from_file.text, from_stream.text);
  EXPECT_EQ(from_file.text, from_bytes.text);
  EXPECT_EQ(std::count(from_file.text.begin(), from_file.text.end(), '\n'), 9);
}

TEST(EventCaptureLibrary, NothingIsWrittenForACaptureWithoutAConversation) {
  TextSink sink;
  const HydrateResult r = hydrate("not json\n", sink);
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.input_converted);
  EXPECT_TRUE(sink.text.empty());
  EXPECT_EQ(codes(r.report.diagnostics), "PH604@1:2 PH603@0:0 ");
}

}  // namespace
}  // namespace pihydrate
