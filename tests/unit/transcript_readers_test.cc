// Claude Code and Codex transcripts -> pi sessions (docs/claude-code.md,
// docs/codex.md): how each reader bids, and the rules a recording alone
// does not pin down, each on a small hand-written transcript.
#include "common/converted_session.h"
#include "pihydrate/findings.h"
#include "pihydrate/formats.h"
#include "readers/readers.h"
#include "readers/thread_converter.h"
#include "readers/transcript_writer.h"

#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

#include <rapidjson/document.h>

namespace pihydrate {
namespace {

using test_support::Converted;
using test_support::entries_of;
using test_support::role_of;

Converted convert_claude_code(const std::string& transcript, const std::string& file, const std::string& leaf = "") {
  Converted out;
  out.session = pihydrate::convert_claude_code(transcript, file, leaf, out);
  return out;
}
Converted convert_codex(const std::string& rollout, const std::string& file) {
  Converted out;
  out.session = pihydrate::convert_codex(rollout, file, out);
  return out;
}

std::string cc(const std::string& type, const std::string& uuid, const std::string& parent, const std::string& message,
               const std::string& extra = "") {
  return R"({"type":")" + type + R"(","uuid":")" + uuid + R"(","parentUuid":)" +
         (parent.empty() ? "null" : "\"" + parent + "\"") +
         R"(,"sessionId":"s-1","cwd":"/home/me/repo","timestamp":"2026-11-26T09:00:00.000Z")" + extra +
         R"(,"message":)" + message + "}\n";
}

std::string assistant_line(const std::string& id, const std::string& block) {
  return R"({"id":")" + id + R"(","role":"assistant","model":"claude-x","content":[)" + block +
         R"(],"stop_reason":"tool_use","usage":{"input_tokens":5,"output_tokens":2}})";
}

// The format each first record is read as: the reader that bids highest.
std::string format_of(const std::string& head) {
  const Reader* r = ReaderRegistry::standard().choose(make_input_head(head, true));
  return r == nullptr ? "none" : r->info().name;
}

TEST(Readers, EachFormatIsFoundFromItsFirstRecords) {
  EXPECT_EQ(format_of(R"({"type":"session","version":3,"id":"x","cwd":"/"})"), "pi");
  EXPECT_EQ(format_of("\n" + cc("user", "u1", "", R"({"role":"user","content":"hi"})")), "claude-code");
  EXPECT_EQ(format_of(R"({"type":"queue-operation","operation":"enqueue","sessionId":"s"})"), "claude-code");
  EXPECT_EQ(format_of(R"({"timestamp":"t","type":"session_meta","payload":{"id":"x"}})"), "codex");
  EXPECT_EQ(format_of(R"({"kind":"chat"})"), "none");
  EXPECT_EQ(format_of("not json"), "none");
  // pi's json mode prints the session header a session file starts with; the events after it tell them apart.
  EXPECT_EQ(format_of("{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"cwd\":\"/\"}\n{\"type\":\"agent_start\"}\n"),
            "pi-events");
  EXPECT_EQ(format_of("{\"type\":\"session\",\"version\":3,\"id\":\"x\",\"cwd\":\"/\"}\n"
                      "{\"type\":\"message\",\"id\":\"a\",\"parentId\":null,\"message\":{}}\n"),
            "pi");
  EXPECT_EQ(format_of("{\"type\":\"response\",\"command\":\"get_state\",\"success\":true}"), "pi-events");
  EXPECT_EQ(format_of("{\"format\":\"thread-export\",\"version\":1,\"thread\":{\"id\":\"t\"}}"), "thread-export");
  EXPECT_EQ(format_of("{\n  \"format\": \"thread-export\",\n  \"version\": 1,"), "thread-export");
  EXPECT_EQ(format_of("{\n  \"thread\": {\"id\": \"t\"},\n  \"format\" : \"thread-export\",\n  \"entries\": ["),
            "thread-export");
  // The marker inside a record's text is not a thread export's.
  EXPECT_EQ(format_of("{\"type\":\"agent_start\"}\n{\"type\":\"message_end\",\"message\":{\"role\":\"user\","
                      "\"content\":\"{\\\"format\\\":\\\"thread-export\\\"}\"}}\n"),
            "pi-events");
  EXPECT_EQ(format_of("{\n  \"entries\": [{\"text\": \"\\\"format\\\": \\\"thread-export\\\"\"}"), "none");
  const std::string tried = ReaderRegistry::standard().tried();
  for (const Reader* r : ReaderRegistry::standard().readers())
    EXPECT_NE(tried.find(r->info().title), std::string::npos) << r->info().name;
}

// C5, C8: a reply's lines chain one after the other, and each parallel
// call's result hangs from its own call's line, so the leaf's parent walk
// passes through one call only. All three calls and results still come over,
// results in call order.
TEST(ClaudeCode, ParallelCallsAndResultsOffTheBranchAreGathered) {
  std::string t = cc("user", "u1", "", R"({"role":"user","content":"Run three."})");
  t += cc("assistant", "a1", "u1", assistant_line("m1", R"({"type":"text","text":"Running."})"));
  for (int k = 1; k <= 3; ++k)
    t += cc("assistant", "c" + std::to_string(k), k == 1 ? "a1" : "c" + std::to_string(k - 1),
            assistant_line("m1", R"({"type":"tool_use","id":"t)" + std::to_string(k) +
                                     R"(","name":"Bash","input":{"command":"echo )" + std::to_string(k) + R"("}})"));
  // Finished 2, 3, 1; the answer hangs from the last result written.
  for (int k : {2, 3, 1})
    t += cc("user", "r" + std::to_string(k), "c" + std::to_string(k),
            R"({"role":"user","content":[{"type":"tool_result","tool_use_id":"t)" + std::to_string(k) +
                R"(","content":")" + std::to_string(k) + R"("}]})");
  t += cc(
      "assistant", "a2", "r1",
      R"({"id":"m2","role":"assistant","model":"claude-x","content":[{"type":"text","text":"Done."}],"stop_reason":"end_turn","usage":{}})");
  const Converted s = convert_claude_code(t, "t.jsonl");
  ASSERT_TRUE(s.ok());
  const auto e = entries_of(s);
  ASSERT_EQ(e.size(), 7u);  // header, user, assistant, 3 results, answer
  EXPECT_EQ(role_of(e[2]), "assistant");
  ASSERT_EQ(e[2]["message"]["content"].Size(), 4u);
  EXPECT_STREQ(e[2]["message"]["stopReason"].GetString(), "toolUse");
  for (int k = 1; k <= 3; ++k) {
    EXPECT_STREQ(e[2 + k]["message"]["toolCallId"].GetString(), ("t" + std::to_string(k)).c_str());
    EXPECT_STREQ(e[2 + k]["message"]["toolName"].GetString(), "Bash");
    EXPECT_STREQ(e[2 + k]["parentId"].GetString(), e[1 + k]["id"].GetString());  // linear
  }
  EXPECT_STREQ(e[6]["message"]["content"][0]["text"].GetString(), "Done.");
  EXPECT_STREQ(e[0]["cwd"].GetString(), "/home/me/repo");
}

// C2: --leaf names a record's uuid; the branch ending there is written.
TEST(ClaudeCode, LeafChoosesTheBranch) {
  std::string t = cc("user", "u1", "", R"({"role":"user","content":"First."})");
  t += cc(
      "assistant", "a1", "u1",
      R"({"id":"m1","role":"assistant","model":"x","content":[{"type":"text","text":"One."}],"stop_reason":"end_turn"})");
  t += cc("user", "u2", "a1", R"({"role":"user","content":"Left."})");
  t += cc("user", "u3", "a1", R"({"role":"user","content":"Right."})");
  auto last_text = [](const Converted& s) {
    const auto e = entries_of(s);
    return std::string(e.back()["message"]["content"][0]["text"].GetString());
  };
  EXPECT_EQ(last_text(convert_claude_code(t, "t.jsonl")), "Right.");
  EXPECT_EQ(last_text(convert_claude_code(t, "t.jsonl", "u2")), "Left.");
  const Converted missing = convert_claude_code(t, "t.jsonl", "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.diagnostics[0].code, Code::kBranchNotFound);
}

// C3, C4, C9: bookkeeping, sidechains and local commands stay out; a record
// type nobody knows is reported once, at its line.
TEST(ClaudeCode, WhatNeverReachesTheModelIsCountedOrReported) {
  std::string t = R"({"type":"queue-operation","operation":"enqueue","sessionId":"s-1"})"
                  "\n";
  t += cc("user", "u1", "", R"({"role":"user","content":"Hi."})");
  t += cc("user", "s1", "u1", R"({"role":"user","content":"side"})", R"(,"isSidechain":true)");
  t += cc("user", "m1", "u1", R"({"role":"user","content":"<command-name>/model</command-name>"})");
  t += R"({"type":"brand-new-kind","uuid":"n1","parentUuid":"m1"})"
       "\n";
  t += R"({"type":"brand-new-kind","uuid":"n2","parentUuid":"n1"})"
       "\n";
  const Converted s = convert_claude_code(t, "t.jsonl");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(entries_of(s).size(), 2u);
  EXPECT_EQ(s.repairs.at("claude-bookkeeping-records"), 1u);
  EXPECT_EQ(s.repairs.at("claude-sidechain-records"), 1u);
  EXPECT_EQ(s.repairs.at("claude-command-records"), 1u);
  EXPECT_EQ(s.repairs.at("claude-unknown-records"), 2u);
  ASSERT_EQ(s.diagnostics.size(), 1u);
  EXPECT_EQ(s.diagnostics[0].code, Code::kTranscriptRecordDropped);
  EXPECT_EQ(s.diagnostics[0].line, 5u);
}

// C10: the compaction keeps what Claude Code preserved (preservedSegment.headUuid).
TEST(ClaudeCode, CompactionKeepsThePreservedSegment) {
  std::string t = cc("user", "u1", "", R"({"role":"user","content":"Write it."})");
  t += cc(
      "assistant", "a1", "u1",
      R"({"id":"m1","role":"assistant","model":"x","content":[{"type":"text","text":"Kept."}],"stop_reason":"end_turn"})");
  t +=
      R"({"type":"system","subtype":"compact_boundary","uuid":"b1","parentUuid":null,"logicalParentUuid":"a1","sessionId":"s-1","compactMetadata":{"preTokens":42,"preservedSegment":{"headUuid":"a1","tailUuid":"a1"}}})"
      "\n";
  t += cc("user", "sum", "b1", R"({"role":"user","content":"This session is being continued. Summary."})",
          R"(,"isCompactSummary":true)");
  t += cc("user", "u2", "sum", R"({"role":"user","content":"Go on."})");
  const Converted s = convert_claude_code(t, "t.jsonl");
  ASSERT_TRUE(s.ok());
  const auto e = entries_of(s);
  ASSERT_EQ(e.size(), 5u);
  EXPECT_STREQ(e[3]["type"].GetString(), "compaction");
  EXPECT_STREQ(e[3]["firstKeptEntryId"].GetString(), e[2]["id"].GetString());
  EXPECT_EQ(e[3]["tokensBefore"].GetUint64(), 42u);
  EXPECT_STREQ(e[3]["summary"].GetString(), "This session is being continued. Summary.");
}

// C1: a transcript without a sessionId still gets an id of its own.
TEST(ClaudeCode, WithoutASessionIdEachTranscriptGetsItsOwnId) {
  auto header_id = [](const std::string& uuid) {
    const Converted s = convert_claude_code(
        R"({"type":"user","uuid":")" + uuid + R"(","parentUuid":null,"message":{"role":"user","content":"Hi."}})",
        "t.jsonl");
    EXPECT_TRUE(s.ok());
    return s.ok() ? std::string(entries_of(s)[0]["id"].GetString()) : std::string();
  };
  EXPECT_FALSE(header_id("u1").empty());
  EXPECT_NE(header_id("u1"), header_id("u2"));
  EXPECT_EQ(header_id("u1"), header_id("u1"));
}

TEST(ClaudeCode, ALineThatIsNotJsonIsAnErrorAtItsPosition) {
  std::string t = cc("user", "u1", "", R"({"role":"user","content":"Hi."})");
  t += "{\"type\":\"user\",\"uuid\":}\n";
  t += cc("user", "u2", "u1", R"({"role":"user","content":"Again."})");
  const Converted s = convert_claude_code(t, "t.jsonl");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.diagnostics[0].code, Code::kTranscriptInvalid);
  EXPECT_EQ(s.diagnostics[0].line, 2u);
  EXPECT_EQ(s.diagnostics[0].column, 23u);  // the "}" where a value belongs
  EXPECT_TRUE(s.session.empty());
  // The same line cut off at the end of the file is only a warning.
  const Converted cut = convert_claude_code(
      cc("user", "u1", "", R"({"role":"user","content":"Hi."})") + "{\"type\":\"user\",\"uu", "t.jsonl");
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut.diagnostics[0].code, Code::kTranscriptRecordDropped);
}

std::string cx(const std::string& type, const std::string& payload) {
  return R"({"timestamp":"2026-11-26T09:00:00.000Z","type":")" + type + R"(","payload":)" + payload + "}\n";
}
const std::string kMeta = cx("session_meta", R"({"id":"01a2-x","timestamp":"2026-11-26T09:00:00.000Z","cwd":"/w"})");

std::string user_item(const std::string& text) {
  return cx("response_item",
            R"({"type":"message","role":"user","content":[{"type":"input_text","text":")" + text + R"("}]})");
}

// K4, K5, K8: harness context stays out; the items of one reply are one
// assistant message; a failing command is an error result by its exit code.
TEST(Codex, RepliesCallsAndExitCodes) {
  std::string t = kMeta + cx("turn_context", R"({"model":"gpt-x"})");
  t += cx("response_item", R"({"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]})");
  t += user_item("<environment_context><cwd>/w</cwd></environment_context>");
  t += user_item("Check it.");
  t += cx("response_item",
          R"({"type":"reasoning","summary":[{"type":"summary_text","text":"Look."}],"encrypted_content":"e"})");
  t += cx("response_item",
          R"({"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"false\"}","call_id":"call_1"})");
  t += cx("token_usage_record",
          R"({"response_id":"resp_1","usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":7}})");
  t += cx(
      "response_item",
      R"({"type":"function_call_output","call_id":"call_1","output":"Chunk ID: a\nProcess exited with code 1\nOutput:\n"})");
  t += cx("event_msg", R"({"type":"token_count"})");
  t += cx("response_item",
          R"({"type":"message","role":"assistant","content":[{"type":"output_text","text":"It failed."}]})");
  const Converted s = convert_codex(t, "r.jsonl");
  ASSERT_TRUE(s.ok());
  const auto e = entries_of(s);
  ASSERT_EQ(e.size(), 5u);
  EXPECT_EQ(role_of(e[1]), "user");
  EXPECT_STREQ(e[1]["message"]["content"][0]["text"].GetString(), "Check it.");
  const auto& call = e[2]["message"];
  EXPECT_STREQ(call["content"][0]["type"].GetString(), "thinking");
  EXPECT_STREQ(call["content"][0]["thinking"].GetString(), "Look.");
  EXPECT_STREQ(call["content"][1]["arguments"]["cmd"].GetString(), "false");
  EXPECT_STREQ(call["model"].GetString(), "gpt-x");
  EXPECT_STREQ(call["stopReason"].GetString(), "toolUse");
  EXPECT_EQ(call["usage"]["input"].GetUint64(), 60u);  // cached input counted apart, as pi does
  EXPECT_EQ(call["usage"]["cacheRead"].GetUint64(), 40u);
  EXPECT_EQ(call["usage"]["output"].GetUint64(), 7u);
  EXPECT_STREQ(call["responseId"].GetString(), "resp_1");
  EXPECT_EQ(e[4]["message"]["usage"]["totalTokens"].GetUint64(), 0u);  // no record for that reply
  EXPECT_TRUE(e[3]["message"]["isError"].GetBool());
  EXPECT_STREQ(e[3]["message"]["toolName"].GetString(), "exec_command");
  EXPECT_STREQ(e[4]["message"]["stopReason"].GetString(), "stop");
  EXPECT_EQ(s.repairs.at("codex-harness-context-dropped"), 1u);
  EXPECT_EQ(s.repairs.at("codex-instructions-dropped"), 1u);
}

// K9: the summary reply is the compaction's; the prompts Codex kept beside it are reported.
TEST(Codex, CompactionDropsItsSummaryReplyAndReportsKeptPrompts) {
  std::string t = kMeta + user_item("Count.");
  t += cx("response_item",
          R"({"type":"message","role":"assistant","content":[{"type":"output_text","text":"Counted."}]})");
  t += cx("response_item",
          R"({"type":"message","role":"assistant","content":[{"type":"output_text","text":"Summary text."}]})");
  t += cx(
      "compacted",
      R"({"message":"Preamble:\nSummary text.","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Count."}]}]})");
  const Converted s = convert_codex(t, "r.jsonl");
  ASSERT_TRUE(s.ok());
  const auto e = entries_of(s);
  ASSERT_EQ(e.size(), 4u);
  EXPECT_STREQ(e[2]["message"]["content"][0]["text"].GetString(), "Counted.");
  EXPECT_STREQ(e[3]["type"].GetString(), "compaction");
  EXPECT_STREQ(e[3]["firstKeptEntryId"].GetString(), e[3]["id"].GetString());
  EXPECT_EQ(s.repairs.at("codex-summary-reply"), 1u);
  ASSERT_EQ(s.diagnostics.size(), 1u);
  EXPECT_EQ(s.diagnostics[0].line, 5u);
}

// A rollout of many items pi cannot use lists a hundred of its warnings
// and counts the rest, in one summary; the repair counts them all.
TEST(Codex, AHundredDroppedItemsAreListedAndTheRestCounted) {
  std::string t = kMeta + user_item("Search.");
  for (int i = 0; i < 150; ++i) t += cx("response_item", R"({"type":"web_search_call","status":"completed"})");
  const Converted s = convert_codex(t, "r.jsonl");
  ASSERT_TRUE(s.ok());
  std::size_t listed = 0;
  for (const Diagnostic& d : s.diagnostics) listed += d.code == Code::kTranscriptRecordDropped && d.unlisted == 0;
  EXPECT_EQ(listed, kListedPerCode);
  ASSERT_FALSE(s.diagnostics.empty());
  EXPECT_EQ(s.diagnostics.back().code, Code::kTranscriptRecordDropped);
  EXPECT_EQ(s.diagnostics.back().unlisted, 50u);
  EXPECT_EQ(s.repairs.at("codex-items-dropped"), 150u);
}

TEST(Codex, AnItemBeforeTheSessionMetaIsAnError) {
  const Converted s = convert_codex(user_item("Hi."), "r.jsonl");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.diagnostics[0].code, Code::kTranscriptInvalid);
  EXPECT_EQ(s.diagnostics[0].line, 1u);
}

// The ids EntryIds gives, the simple way: each id's key in a map.
std::string entry_id_for(const std::string& key, std::map<std::string, std::string>& taken) {
  for (std::uint64_t seed = 0;; ++seed) {
    std::string id = hex8_id(stable_hash(key, 1469598103934665603ULL + seed));
    auto [it, inserted] = taken.emplace(id, key);
    if (inserted || it->second == key) return id;
  }
}

// EntryIds is entry_id_for without a tree: the same id for every key, the
// same id again for a key asked twice, and each id taken once. 200000 keys
// of 32-bit ids hold a few collisions (about n^2 / 2^33), which move a key
// on to the next seed in both.
TEST(TranscriptWriter, EntryIdsGiveTheIdsOfEntryIdFor) {
  std::map<std::string, std::string> taken;
  EntryIds ids;
  std::set<std::string> seen;
  int moved = 0;  // keys whose first id was taken
  for (int n = 0; n < 200000; ++n) {
    const std::string key = "key:" + std::to_string(n);
    const std::string id = ids.id_for(key);
    ASSERT_EQ(id, entry_id_for(key, taken)) << key;
    EXPECT_TRUE(seen.insert(id).second) << key;
    if (n % 1000 == 0) {
      EXPECT_EQ(ids.id_for(key), id) << key;
    }
    moved += id != hex8_id(stable_hash(key));
  }
  EXPECT_GT(moved, 0);
  EXPECT_EQ(taken.size(), 200000u);  // a key asked again took no id of its own
}

// JsonWriter's String() writes what RapidJSON's Writer writes: every byte
// alone, between others, and in runs longer and shorter than the 16-byte
// steps of both; keys, nesting and a parsed document's Accept go through it too.
TEST(TranscriptWriter, JsonWriterEscapesAsRapidJsonsWriter) {
  std::vector<std::string> texts = {"", "plain", std::string(1, '\0'), "a\"b\\c/d\x7f\xc3\xa9\xff"};
  for (int c = 0; c < 256; ++c) {
    texts.push_back(std::string(1, static_cast<char>(c)));
    texts.push_back("ab" + std::string(1, static_cast<char>(c)) + std::string(40, 'x') + static_cast<char>(c));
  }
  std::uint32_t state = 12345;
  for (int n = 0; n < 4000; ++n) {
    const unsigned rare = n % 2 == 0 ? 4 : 64;  // often or seldom a byte to escape: short runs and long ones
    std::string t(state % (n % 2 == 0 ? 97 : 301), ' ');
    for (char& c : t) {
      state = state * 1103515245u + 12345u;
      const unsigned pick = state >> 20;
      c = static_cast<char>(pick % rare == 0 ? pick % 40          // a control byte, a quote...
                            : pick % 3 == 0  ? 0x80 + pick % 128  // UTF-8's bytes, above every escape
                                             : 'a' + pick % 26);
    }
    texts.push_back(t);
  }
  for (const std::string& text : texts) {
    rapidjson::StringBuffer want_buffer, got_buffer;
    rapidjson::Writer<rapidjson::StringBuffer> want(want_buffer);
    JsonWriter got(got_buffer);
    want.StartObject(), got.StartObject();
    want.Key(text.data(), static_cast<rapidjson::SizeType>(text.size()));
    got.Key(text.data(), static_cast<rapidjson::SizeType>(text.size()));
    want.Null(), got.Null();
    want.Key("k"), got.Key("k");
    want.StartArray(), got.StartArray();
    for (int k = 0; k < 2; ++k) {
      want.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
      got.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
    }
    want.EndArray(), got.EndArray();
    want.EndObject(), got.EndObject();
    ASSERT_EQ(std::string(got_buffer.GetString()), std::string(want_buffer.GetString()));
    rapidjson::Document doc;
    doc.Parse(got_buffer.GetString());
    ASSERT_FALSE(doc.HasParseError());
    rapidjson::StringBuffer again;
    JsonWriter w(again);
    doc.Accept(w);
    EXPECT_EQ(std::string(again.GetString()), std::string(want_buffer.GetString()));
  }
}

// millis_of reads the agents' usual times itself: what ms_from_iso reads from
// them, for every day of years around leap rules and the epoch (a day past a
// month's end too, which both carry into the next month), and for the
// shapes it leaves to ms_from_iso.
TEST(TranscriptWriter, MillisOfReadsTimesAsMsFromIso) {
  const auto want = [](const std::string& t) {
    const std::int64_t ms = thread_converter::ms_from_iso(t);
    return ms < 0 ? std::int64_t{-7} : ms;
  };
  std::vector<std::string> times = {
      "2026-11-28T06:59:44.676Z",  "2026-11-28T06:59:44.676+01:00", "2026-11-28T06:59:44Z",
      "2026-11-28T06:59:44.6765Z", "2026-13-28T06:59:44.676Z",      "2026-11-28T24:00:00.000Z",
      "2026-11-28T06:59:60.000Z",  "2026-11-28 06:59:44.676Z",      "2026-11-2AT06:59:44.676Z",
      "1969-12-31T23:59:59.999Z",  "0000-01-01T00:00:00.000Z",      ""};
  char text[32];
  for (int year : {1, 1900, 1969, 1970, 1971, 1999, 2000, 2004, 2026, 2100, 2400, 9999})
    for (int month = 1; month <= 12; ++month)
      for (int day = 1; day <= 31; ++day) {
        std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", year, month, day, (day * 7) % 24,
                      (day * 13) % 60, (month * 5) % 60, (day * 37) % 1000);
        times.push_back(text);
      }
  for (const std::string& t : times) EXPECT_EQ(millis_of(t, -7), want(t)) << t;
}

}  // namespace
}  // namespace pihydrate
