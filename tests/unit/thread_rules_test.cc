// The thread export's planning rules (docs/thread-export.md R3, R4/R5,
// R6, R7), each on a few entries built by hand.
#include "readers/thread_rules.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace pihydrate {
namespace thread_rules {
namespace {

// A small thread: entries added in order, each with an id, a text and
// whatever the rule under test reads.
class Thread {
 public:
  std::size_t chat(ChatRole role, std::string text, std::string ref = "") {
    RuleEntry e;
    e.kind = Kind::kChat;
    e.role = role;
    return add(e, std::move(text), std::move(ref));
  }
  std::size_t user(std::string text) { return chat(ChatRole::kUser, std::move(text)); }
  std::size_t assistant_turn(std::string text, std::string pi_ref = "") {
    return chat(ChatRole::kAssistant, std::move(text), std::move(pi_ref));
  }
  std::size_t pi_user(std::string text, std::string chat_ref = "") {
    return add(entry(Kind::kPiUser), std::move(text), std::move(chat_ref));
  }
  std::size_t pi_assistant(std::string text, std::string timestamp = "1") {
    RuleEntry e = entry(Kind::kPiAssistant);
    keep_.push_back(std::move(timestamp));
    e.final_timestamp = keep_.back();
    return add(e, std::move(text), "");
  }
  std::size_t tool_result() { return add(entry(Kind::kPiToolResult), "", ""); }
  std::size_t chunk(std::string stream_key = "") {
    RuleEntry e = entry(Kind::kPiChunk);
    if (!stream_key.empty()) {
      keep_.push_back(std::move(stream_key));
      e.stream_key = keep_.back();
      e.has_stream_key = true;
    }
    return add(e, "", "");
  }
  std::string id(std::size_t i) const { return "e" + std::to_string(i); }

  const RuleEntries& entries() const { return entries_; }
  PositionOfId position_of_id() const {
    return [this](std::string_view id) -> std::int64_t {
      for (std::size_t i = 0; i < entries_.size(); ++i)
        if (entries_[i].id == id) return static_cast<std::int64_t>(i);
      return -1;
    };
  }
  TextOf text_of() const {
    return [this](std::size_t i) { return texts_[i]; };
  }

 private:
  static RuleEntry entry(Kind kind) {
    RuleEntry e;
    e.kind = kind;
    return e;
  }
  std::size_t add(RuleEntry e, std::string text, std::string ref) {
    const std::size_t i = entries_.size();
    keep_.push_back(id(i));
    e.id = keep_.back();
    keep_.push_back(std::move(ref));
    e.ref = keep_.back();
    entries_.push_back(e);
    texts_.push_back(std::move(text));
    return i;
  }
  std::deque<std::string> keep_;  // the views' bytes (a deque never moves them)
  RuleEntries entries_;
  std::vector<std::string> texts_;
};

UserReplacements replacements(const Thread& t) {
  return plan_user_replacements(t.entries(), t.position_of_id(), t.text_of());
}
std::vector<std::uint8_t> echoes(const Thread& t) {
  return find_assistant_echoes(t.entries(), t.position_of_id(), t.text_of());
}

// R3: "A pi.user entry ... replaces the chat turn it duplicates (named by data.chatRef, ...)"
TEST(ThreadRulesR3, ChatRefNamesTheTurnItReplaces) {
  Thread t;
  const std::size_t first = t.user("hello");
  t.user("something else");
  const std::size_t pi = t.pi_user("different words", t.id(first));
  const UserReplacements plan = replacements(t);
  EXPECT_EQ(plan.replaced_by[first], static_cast<std::int32_t>(pi));
  EXPECT_EQ(plan.by_pi_user, 1u);
}

// R3: "... else the nearest earlier chat user turn that no other pi.user replaces yet, if its text is the same"
TEST(ThreadRulesR3, WithoutChatRefTheNearestTurnWithTheSameText) {
  Thread t;
  const std::size_t turn = t.user("fix   the\nbug");
  t.pi_assistant("done");
  const std::size_t pi = t.pi_user("fix the bug");
  EXPECT_EQ(replacements(t).replaced_by[turn], static_cast<std::int32_t>(pi));
}

TEST(ThreadRulesR3, TheNearestTurnIsTheOnlyCandidate) {
  Thread t;
  const std::size_t older = t.user("continue");
  const std::size_t nearest = t.user("something else");
  t.pi_user("continue");
  const UserReplacements plan = replacements(t);
  EXPECT_EQ(plan.replaced_by[older], -1);  // not searched further back: the pi.user stays in its place
  EXPECT_EQ(plan.replaced_by[nearest], -1);
  EXPECT_EQ(plan.by_pi_user, 0u);
}

TEST(ThreadRulesR3, ATurnAlreadyReplacedIsSkippedForTheOneBefore) {
  Thread t;
  const std::size_t first = t.user("one");
  const std::size_t second = t.user("two");
  const std::size_t pi_two = t.pi_user("two");
  const std::size_t pi_one = t.pi_user("one");
  const UserReplacements plan = replacements(t);
  EXPECT_EQ(plan.replaced_by[second], static_cast<std::int32_t>(pi_two));
  EXPECT_EQ(plan.replaced_by[first], static_cast<std::int32_t>(pi_one));
  EXPECT_EQ(plan.by_pi_user, 2u);
}

TEST(ThreadRulesR3, ATurnIsReplacedOnce) {
  Thread t;
  const std::size_t turn = t.user("hi");
  const std::size_t pi = t.pi_user("hi", t.id(turn));
  t.pi_user("hi", t.id(turn));
  const UserReplacements plan = replacements(t);
  EXPECT_EQ(plan.replaced_by[turn], static_cast<std::int32_t>(pi));
  EXPECT_EQ(plan.by_pi_user, 1u);
}

TEST(ThreadRulesR3, AChatRefToSomethingElseFallsBackToText) {
  Thread t;
  const std::size_t turn = t.user("hi");
  const std::size_t reply = t.pi_assistant("hello");
  const std::size_t pi = t.pi_user("hi", t.id(reply));
  EXPECT_EQ(replacements(t).replaced_by[turn], static_cast<std::int32_t>(pi));
}

// R7: "Dropped when they echo a pi.assistant: piRef names one, ..."
TEST(ThreadRulesR7, PiRefNamesAPiAssistant) {
  Thread t;
  t.user("q");
  const std::size_t answer = t.pi_assistant("the answer");
  const std::size_t echo = t.assistant_turn("other words", t.id(answer));
  EXPECT_TRUE(echoes(t)[echo]);
}

// R7: "... or the text equals that of a pi.assistant of the same turn"
TEST(ThreadRulesR7, SameTextInTheSameTurn) {
  Thread t;
  t.user("q");
  t.pi_assistant("first part\nsecond   part\n");
  const std::size_t echo = t.assistant_turn("first part second part");
  const std::size_t glued = t.assistant_turn("first partsecond part");
  EXPECT_TRUE(echoes(t)[echo]);
  EXPECT_TRUE(echoes(t)[glued]);  // the blocks' line breaks left out
}

TEST(ThreadRulesR7, AnEchoBeforeItsPiAssistantInTheTurn) {
  Thread t;
  t.user("q");
  const std::size_t echo = t.assistant_turn("answer");
  t.pi_assistant("answer");
  EXPECT_TRUE(echoes(t)[echo]);
}

TEST(ThreadRulesR7, TheSameTextInAnotherTurnIsNoEcho) {
  Thread t;
  t.user("q1");
  t.pi_assistant("yes");
  t.user("q2");
  const std::size_t turn = t.assistant_turn("yes");
  const std::vector<std::uint8_t> found = echoes(t);
  EXPECT_FALSE(found[turn]);
  EXPECT_EQ(std::count(found.begin(), found.end(), 1), 0);
}

TEST(ThreadRulesR7, ADifferentTextIsKept) {
  Thread t;
  t.user("q");
  t.pi_assistant("yes");
  const std::size_t turn = t.assistant_turn("no");
  EXPECT_FALSE(echoes(t)[turn]);
}

// R6: "A stream closed by a final pi.assistant (... or that ends the run) is dropped"
TEST(ThreadRulesR6, ARunClosedByAPiAssistantIsDropped) {
  Thread t;
  t.user("q");
  t.chunk();
  t.chunk();
  t.pi_assistant("done");
  const StreamPlan plan = plan_chunk_streams(t.entries(), PartialPolicy::kKeep);
  EXPECT_EQ(plan.chunks_of_final_messages, 2u);
  EXPECT_TRUE(plan.rebuilt.empty());
  EXPECT_TRUE(plan.dropped.empty());
}

// R6: "(one whose message.timestamp equals the streamKey ...)"
TEST(ThreadRulesR6, AKeyedStreamClosedByItsTimestamp) {
  Thread t;
  t.chunk("42");
  t.tool_result();
  t.chunk("42");
  t.pi_assistant("done", "42");
  EXPECT_EQ(plan_chunk_streams(t.entries(), PartialPolicy::kKeep).chunks_of_final_messages, 2u);
}

// R6: "An interrupted stream follows --partial"
TEST(ThreadRulesR6, AnInterruptedRunFollowsPartial) {
  Thread t;
  t.user("q");
  const std::size_t a = t.chunk();
  t.user("chat entries inside do not end a run");
  const std::size_t b = t.chunk();
  t.tool_result();  // ends the run without a final message
  const StreamPlan keep = plan_chunk_streams(t.entries(), PartialPolicy::kKeep);
  ASSERT_EQ(keep.rebuilt.size(), 1u);
  EXPECT_EQ(keep.rebuilt[0], (std::vector<std::size_t>{a, b}));
  EXPECT_TRUE(keep.dropped.empty());
  const StreamPlan drop = plan_chunk_streams(t.entries(), PartialPolicy::kDrop);
  EXPECT_EQ(drop.dropped, keep.rebuilt);
  EXPECT_TRUE(drop.rebuilt.empty());
}

TEST(ThreadRulesR6, InterruptedStreamsInTheOrderOfTheirLastChunk) {
  Thread t;
  const std::size_t k1 = t.chunk("\"k1\"");
  const std::size_t k2 = t.chunk("\"k2\"");
  const std::size_t k1_end = t.chunk("\"k1\"");
  const StreamPlan plan = plan_chunk_streams(t.entries(), PartialPolicy::kText);
  ASSERT_EQ(plan.rebuilt.size(), 2u);
  EXPECT_EQ(plan.rebuilt[0], (std::vector<std::size_t>{k2}));
  EXPECT_EQ(plan.rebuilt[1], (std::vector<std::size_t>{k1, k1_end}));
}

// Lines converted before a compaction, as R9 reads them.
class Lines final : public ConvertedLines {
 public:
  Lines& user() { return add(true, false, {}); }
  Lines& assistant(std::vector<std::string_view> calls = {}) { return add(false, false, std::move(calls)); }
  Lines& result(std::string_view call) { return add(false, true, {call}); }
  std::size_t size() const override { return lines_.size(); }
  bool is_user_turn(std::size_t i) const override { return lines_[i].user; }
  bool is_tool_result(std::size_t i) const override { return lines_[i].result; }
  std::vector<std::string_view> tool_call_ids(std::size_t i) const override { return lines_[i].ids; }

 private:
  struct Line {
    bool user, result;
    std::vector<std::string_view> ids;
  };
  Lines& add(bool user, bool result, std::vector<std::string_view> ids) {
    lines_.push_back({user, result, std::move(ids)});
    return *this;
  }
  std::vector<Line> lines_;
};

// R9: "anchored by, in order: firstKeptRef ...; result.firstKeptEntryId ...; the last user turn ...; itself"
TEST(ThreadRulesR9, TheAnchorsInOrder) {
  Lines lines;
  lines.user().assistant().user().assistant();  // lines 0-3
  CompactionAnchor a = anchor_compaction(true, 1, 0, lines);
  EXPECT_EQ(a.line, 1);
  EXPECT_STREQ(a.how, "firstKeptRef");
  a = anchor_compaction(false, -1, 0, lines);
  EXPECT_EQ(a.line, 0);
  EXPECT_STREQ(a.how, "piEntryId");
  a = anchor_compaction(true, -1, -1, lines);  // a firstKeptRef that names nothing: noted, and the next way taken
  EXPECT_TRUE(a.first_kept_ref_unused);
  EXPECT_EQ(a.line, 2);
  EXPECT_STREQ(a.how, "last-user-turn");
  Lines no_user;
  no_user.assistant();
  a = anchor_compaction(false, -1, -1, no_user);
  EXPECT_EQ(a.line, -1);
  EXPECT_STREQ(a.how, "self");
}

// R9: "An anchor that is a tool result moves back to the assistant that made the call"
TEST(ThreadRulesR9, AResultMovesBackToItsCall) {
  Lines lines;
  lines.user().assistant({"a", "b"}).result("a").result("b");
  EXPECT_EQ(anchor_compaction(true, 3, -1, lines).line, 1);
  Lines orphan;
  orphan.user().result("x");
  EXPECT_EQ(anchor_compaction(true, 1, -1, orphan).line, 1);  // no call to move back to: stays
}

// R4/R5: a stopReason that is pending or missing is settled; a missing
// message.timestamp is added; nothing else at the message's own level.
TEST(ThreadRulesR4, MessageRepairs) {
  PiMessageShape plain;
  plain.has_timestamp = true;
  plain.stop_reason_settled = true;
  EXPECT_FALSE(message_repairs(Kind::kPiAssistant, plain).any());
  PiMessageShape pending = plain;
  pending.stop_reason_settled = is_settled_stop_reason("pending");
  EXPECT_TRUE(message_repairs(Kind::kPiAssistant, pending).settle_stop_reason);
  EXPECT_FALSE(message_repairs(Kind::kPiToolResult, pending).any());  // a tool result has no stopReason
  PiMessageShape no_time = plain;
  no_time.has_timestamp = false;
  EXPECT_TRUE(message_repairs(Kind::kPiToolResult, no_time).add_timestamp);
  EXPECT_TRUE(message_repairs(Kind::kPiAssistant, no_time).add_timestamp);
  EXPECT_FALSE(is_settled_stop_reason(""));
  EXPECT_TRUE(is_settled_stop_reason("toolUse"));
}

TEST(ThreadRules, NormalizeSpace) {
  EXPECT_EQ(normalize_space("  a \t b\r\n\nc  "), "a b c");
  EXPECT_EQ(normalize_space(""), "");
}

}  // namespace
}  // namespace thread_rules
}  // namespace pihydrate
