// build_resume_context, step by step: the pi 1.5 paths of buildSessionContext
// (a compaction's systemMessage, system messages before it, a context_edit
// that replaces content with a string) and of transformMessages (system
// messages held while calls wait, thinking of the same and of another model).
#include "pihydrate/context.h"

#include <gtest/gtest.h>

namespace pihydrate {
namespace {

const char* kHeader = R"({"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"})";

// What pi `version` sends on resuming a session of these lines (after a v3 header).
ResumeContext resume(const std::vector<std::string>& lines, PiVersion version) {
  std::string text = std::string(kHeader) + "\n";
  for (const std::string& l : lines) text += l + "\n";
  auto source = make_memory_source(text);
  const SessionIndex index = build_session_index(*source, "t.jsonl");
  const PiView view = build_pi_view(index, version);
  return build_resume_context(index, view, [&](const Entry& e) { return text.substr(e.offset, e.length); });
}

std::vector<std::string> roles(const ResumeContext& rc) {
  std::vector<std::string> out;
  for (const SentMessage& m : rc.messages) out.push_back(m.role);
  return out;
}

TEST(ResumeContextSteps, CompactionSystemMessageComesFirstAndEarlierSystemMessagesAreLeftOut) {
  const std::vector<std::string> lines = {
      R"({"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"q"}})",
      R"({"type":"message","id":"b","parentId":"a","message":{"role":"system","content":"early"}})",
      R"({"type":"compaction","id":"c","parentId":"b","summary":"S","firstKeptEntryId":"a","tokensBefore":1,)"
      R"("systemMessage":{"role":"system","content":"sys"}})",
      R"({"type":"message","id":"d","parentId":"c","message":{"role":"user","content":"after"}})",
  };
  ResumeContext rc = resume(lines, PiVersion::k1_5);
  ASSERT_EQ(roles(rc), (std::vector<std::string>{"system", "user", "user", "user"}));
  EXPECT_EQ(rc.messages[0].source, SentSource::kCompactionSystemMessage);
  EXPECT_EQ(rc.messages[0].texts.at(0), "sys");
  EXPECT_EQ(rc.messages[1].source, SentSource::kCompactionSummary);
  EXPECT_EQ(rc.messages[2].texts.at(0), "q");
  EXPECT_EQ(rc.messages[3].texts.at(0), "after");
  ASSERT_EQ(rc.dropped.size(), 1u);
  EXPECT_EQ(rc.dropped[0].reason, DropReason::kSystemBeforeCompaction);
  EXPECT_EQ(rc.dropped[0].line, 3u);
  EXPECT_EQ(rc.dropped[0].by_line, 4u);

  ResumeContext old = resume(lines, PiVersion::k0_78);
  EXPECT_EQ(roles(old), (std::vector<std::string>{"user", "user", "user"}));
  ASSERT_EQ(old.dropped.size(), 1u);
  EXPECT_EQ(old.dropped[0].reason, DropReason::kSystemRole);
}

TEST(ResumeContextSteps, SystemMessageWaitsForTheResultsAndAStringReplacementIsOneTextBlock) {
  const std::vector<std::string> lines = {
      R"({"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"q"}})",
      R"({"type":"message","id":"b","parentId":"a","message":{"role":"assistant","content":[{"type":"toolCall",)"
      R"("id":"t1","name":"bash","arguments":{"c":"ls"}}],"provider":"p","model":"m1","api":"a","stopReason":"toolUse"}})",
      R"({"type":"message","id":"c","parentId":"b","message":{"role":"system","content":"wait"}})",
      R"({"type":"message","id":"d","parentId":"c","message":{"role":"toolResult","toolCallId":"t1","toolName":"bash",)"
      R"("content":[{"type":"text","text":"r"}],"isError":false}})",
      R"({"type":"context_edit","id":"e","parentId":"d","targetId":"d","replacement":{"content":"new"}})",
  };
  ResumeContext rc = resume(lines, PiVersion::k1_5);
  ASSERT_EQ(roles(rc), (std::vector<std::string>{"user", "assistant", "toolResult", "system"}));
  EXPECT_EQ(rc.messages[2].texts, std::vector<std::string>{"new"});
  EXPECT_TRUE(rc.messages[2].edited);
  EXPECT_FALSE(rc.messages[2].orphan);
  EXPECT_EQ(rc.messages[3].texts.at(0), "wait");
  EXPECT_EQ(rc.messages[3].line, 4u);

  ResumeContext old = resume(lines, PiVersion::k0_78);
  ASSERT_EQ(roles(old), (std::vector<std::string>{"user", "assistant", "toolResult"}));
  EXPECT_EQ(old.messages[2].texts, std::vector<std::string>{"r"});
  EXPECT_FALSE(old.messages[2].edited);
}

TEST(ResumeContextSteps, ThinkingOfTheResumedModelIsSentUnlessBlank) {
  const std::vector<std::string> lines = {
      R"({"type":"message","id":"a","parentId":null,"message":{"role":"user","content":"q"}})",
      R"({"type":"message","id":"b","parentId":"a","message":{"role":"assistant","content":[)"
      R"({"type":"thinking","thinking":"old idea"},{"type":"thinking","thinking":"","redacted":true},)"
      R"({"type":"text","text":"x"}],"provider":"p","model":"m0","api":"a","stopReason":"stop"}})",
      R"({"type":"message","id":"c","parentId":"b","message":{"role":"user","content":"q2"}})",
      R"({"type":"message","id":"d","parentId":"c","message":{"role":"assistant","content":[)"
      R"({"type":"thinking","thinking":"sig","thinkingSignature":"s"},{"type":"thinking","thinking":" "},)"
      R"({"type":"thinking","thinking":"plain"},{"type":"text","text":"y"}],)"
      R"("provider":"p","model":"m1","api":"a","stopReason":"stop"}})",
  };
  for (PiVersion version : {PiVersion::k0_78, PiVersion::k1_5}) {
    ResumeContext rc = resume(lines, version);
    ASSERT_EQ(rc.messages.size(), 4u);
    const SentMessage& same = rc.messages[3];  // the resumed model's: signed and plain sent, blank dropped
    EXPECT_EQ(same.thinking, 2u);
    EXPECT_EQ(same.thinking_dropped, 1u);
    EXPECT_EQ(same.texts, std::vector<std::string>{"y"});
  }
  const SentMessage other_15 = resume(lines, PiVersion::k1_5).messages.at(1);  // 1.5 drops another model's thinking
  EXPECT_EQ(other_15.thinking_dropped, 2u);
  EXPECT_EQ(other_15.texts, std::vector<std::string>{"x"});
  const SentMessage other_078 =
      resume(lines, PiVersion::k0_78).messages.at(1);  // 0.78 sends it as text, unless redacted
  EXPECT_EQ(other_078.thinking_as_text, 1u);
  EXPECT_EQ(other_078.thinking_dropped, 1u);
  EXPECT_EQ(other_078.texts, (std::vector<std::string>{"old idea", "x"}));
}

}  // namespace
}  // namespace pihydrate
