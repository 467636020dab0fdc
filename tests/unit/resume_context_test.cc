// build_resume_context: what pi sends on resume, per pi version, on small sessions.
#include "pihydrate/context.h"

#include <gtest/gtest.h>

namespace pihydrate {
namespace {

const char* kHeader = R"({"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"})";

struct Session {
  std::string text;
  SessionIndex index;
  ResumeContext get(PiVersion version) {
    auto source = make_memory_source(text);
    index = build_session_index(*source, "t.jsonl");
    PiView view = build_pi_view(index, version);
    return build_resume_context(index, view, [&](const Entry& e) { return text.substr(e.offset, e.length); });
  }
};

Session session(const std::vector<std::string>& lines, const char* header = kHeader) {
  Session s;
  s.text = std::string(header) + "\n";
  for (const std::string& l : lines) s.text += l + "\n";
  return s;
}

// A message entry; `parent` empty for the first.
std::string msg(const char* id, const char* parent, const std::string& message) {
  std::string p = *parent ? std::string("\"") + parent + "\"" : "null";
  return std::string(R"({"type":"message","id":")") + id + R"(","parentId":)" + p + R"(,"message":)" + message + "}";
}
std::string user(const char* text) {
  return std::string(R"({"role":"user","content":[{"type":"text","text":")") + text + R"("}]})";
}
std::string assistant(const std::string& content, const char* stop = "stop", const char* model = "m1") {
  return R"({"role":"assistant","content":)" + content + R"(,"provider":"p","model":")" + model +
         R"(","api":"a","stopReason":")" + stop + R"("})";
}
std::string result(const char* call, const char* text) {
  return std::string(R"({"role":"toolResult","toolCallId":")") + call +
         R"(","toolName":"bash","content":[{"type":"text","text":")" + text + R"("}],"isError":false})";
}
const char* kCall =
    R"([{"type":"text","text":"Looking."},{"type":"toolCall","id":"t1","name":"bash","arguments":{"c":"ls"}}])";

std::vector<std::string> roles(const ResumeContext& rc) {
  std::vector<std::string> out;
  for (const SentMessage& m : rc.messages) out.push_back(m.role);
  return out;
}

TEST(ResumeContext, CompactionSummaryFirstThenKeptRangeAndTheRestDropped) {
  Session s = session({
      msg("a", "", user("old question")),
      msg("b", "a", assistant(R"([{"type":"text","text":"old answer"}])")),
      msg("c", "b", user("kept question")),
      R"({"type":"compaction","id":"d","parentId":"c","summary":"S","firstKeptEntryId":"c","tokensBefore":1})",
      msg("e", "d", user("new question")),
  });
  for (PiVersion v : {PiVersion::k0_78, PiVersion::k1_5}) {
    ResumeContext rc = s.get(v);
    ASSERT_TRUE(rc.loads);
    ASSERT_EQ(rc.messages.size(), 3u);
    EXPECT_EQ(rc.messages[0].source, SentSource::kCompactionSummary);
    EXPECT_EQ(rc.messages[0].line, 5u);
    EXPECT_EQ(rc.messages[0].texts.at(0),
              "The conversation history before this point was compacted into the following summary:\n\n<summary>\nS\n"
              "</summary>");
    EXPECT_EQ(rc.messages[1].texts.at(0), "kept question");
    EXPECT_EQ(rc.messages[2].texts.at(0), "new question");
    ASSERT_EQ(rc.dropped.size(), 2u);
    EXPECT_EQ(rc.dropped[0].line, 2u);
    EXPECT_EQ(rc.dropped[0].reason, DropReason::kBeforeFirstKept);
    EXPECT_EQ(rc.dropped[0].by_line, 5u);
    EXPECT_EQ(rc.dropped[1].what, "message (assistant)");
  }
}

TEST(ResumeContext, BranchSummaryIsWrappedAndAnEmptyOneDropped) {
  Session s = session({
      msg("a", "", user("q")),
      R"({"type":"branch_summary","id":"b","parentId":"a","fromId":"x","summary":"tried X"})",
      R"({"type":"branch_summary","id":"c","parentId":"b","fromId":"y","summary":""})",
  });
  ResumeContext rc = s.get(PiVersion::k1_5);
  ASSERT_EQ(rc.messages.size(), 2u);
  EXPECT_EQ(rc.messages[1].source, SentSource::kBranchSummary);
  EXPECT_EQ(rc.messages[1].texts.at(0),
            "The following is a summary of a branch that this conversation came back from:\n\n<summary>\ntried "
            "X</summary>");
  ASSERT_EQ(rc.dropped.size(), 1u);
  EXPECT_EQ(rc.dropped[0].reason, DropReason::kEmptyBranchSummary);
}

TEST(ResumeContext, MissingResultIsSynthesizedWhereTheTurnCloses) {
  Session s =
      session({msg("a", "", user("q")), msg("b", "a", assistant(kCall, "toolUse")), msg("c", "b", user("next"))});
  ResumeContext rc = s.get(PiVersion::k1_5);
  EXPECT_EQ(roles(rc), (std::vector<std::string>{"user", "assistant", "toolResult", "user"}));
  const SentMessage& r = rc.messages[2];
  EXPECT_EQ(r.source, SentSource::kSynthesized);
  EXPECT_EQ(r.line, 0u);
  EXPECT_EQ(r.call_line, 3u);
  EXPECT_EQ(r.tool_call_id.text, "t1");
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.texts, std::vector<std::string>{"No result provided"});
  ASSERT_EQ(rc.messages[1].tool_calls.size(), 1u);
  EXPECT_EQ(rc.messages[1].tool_calls[0].arguments, R"({"c":"ls"})");
  EXPECT_EQ(rc.messages[1].tool_calls[0].name.text, "bash");
}

TEST(ResumeContext, AbortedAssistantIsSkippedAndItsResultSentAsAnOrphan) {
  Session s = session({msg("a", "", user("q")), msg("b", "a", assistant(kCall, "aborted")),
                       msg("c", "b", result("t1", "Command aborted"))});
  ResumeContext rc = s.get(PiVersion::k0_78);
  EXPECT_EQ(roles(rc), (std::vector<std::string>{"user", "toolResult"}));
  EXPECT_TRUE(rc.messages[1].orphan);
  ASSERT_EQ(rc.dropped.size(), 1u);
  EXPECT_EQ(rc.dropped[0].line, 3u);
  EXPECT_EQ(rc.dropped[0].reason, DropReason::kAbortedAssistant);
}

TEST(ResumeContext, BashExecutionTextAndExcludedCommands) {
  Session s = session({
      msg("a", "", R"({"role":"bashExecution","command":"make","output":"boom","exitCode":2})"),
      msg("b", "a", R"({"role":"bashExecution","command":"ls","output":"","exitCode":0,"cancelled":true})"),
      msg("c", "b",
          R"({"role":"bashExecution","command":"cat big","output":"x","exitCode":0,"truncated":true,"fullOutputPath":"/tmp/o"})"),
      msg("d", "c", R"({"role":"bashExecution","command":"env","output":"SECRET","excludeFromContext":true})"),
  });
  ResumeContext rc = s.get(PiVersion::k1_5);
  ASSERT_EQ(rc.messages.size(), 3u);
  EXPECT_EQ(rc.messages[0].role, "user");
  EXPECT_EQ(rc.messages[0].source, SentSource::kBashExecution);
  EXPECT_EQ(rc.messages[0].texts.at(0), "Ran `make`\n```\nboom\n```\n\nCommand exited with code 2");
  EXPECT_EQ(rc.messages[1].texts.at(0), "Ran `ls`\n(no output)\n\n(command cancelled)");
  EXPECT_EQ(rc.messages[2].texts.at(0), "Ran `cat big`\n```\nx\n```\n\n[Output truncated. Full output: /tmp/o]");
  ASSERT_EQ(rc.dropped.size(), 1u);
  EXPECT_EQ(rc.dropped[0].reason, DropReason::kBashExcluded);
}

TEST(ResumeContext, ThinkingOfAnotherModelIsTextFor078AndDroppedBy15) {
  const char* thinking = R"([{"type":"thinking","thinking":"hmm"},{"type":"text","text":"A"}])";
  Session s = session({msg("a", "", user("q")), msg("b", "a", assistant(thinking, "stop", "old")),
                       msg("c", "b", assistant(thinking, "stop", "new"))});
  ResumeContext a = s.get(PiVersion::k0_78);
  EXPECT_EQ(a.model.id, "new");
  EXPECT_EQ(a.model.api, "a");
  EXPECT_EQ(a.messages[1].texts, (std::vector<std::string>{"hmm", "A"}));
  EXPECT_EQ(a.messages[1].thinking_as_text, 1u);
  EXPECT_EQ(a.messages[2].thinking, 1u);  // the resumed model's own
  ResumeContext b = s.get(PiVersion::k1_5);
  EXPECT_EQ(b.messages[1].texts, std::vector<std::string>{"A"});
  EXPECT_EQ(b.messages[1].thinking_dropped, 1u);
  EXPECT_EQ(b.messages[2].thinking, 1u);
}

TEST(ResumeContext, ContextEditReplacesOrRemovesIn15Only) {
  Session s = session({
      msg("a", "", user("secret")),
      msg("b", "a", user("keep")),
      R"({"type":"context_edit","id":"c","parentId":"b","targetId":"a","replacement":{"content":[{"type":"text","text":"[redacted]"}]}})",
      R"({"type":"context_edit","id":"d","parentId":"c","targetId":"b","replacement":null})",
  });
  ResumeContext old = s.get(PiVersion::k0_78);
  ASSERT_EQ(old.messages.size(), 2u);
  EXPECT_EQ(old.messages[0].texts.at(0), "secret");
  ResumeContext rc = s.get(PiVersion::k1_5);
  ASSERT_EQ(rc.messages.size(), 1u);
  EXPECT_EQ(rc.messages[0].texts.at(0), "[redacted]");
  EXPECT_TRUE(rc.messages[0].edited);
  ASSERT_EQ(rc.dropped.size(), 1u);
  EXPECT_EQ(rc.dropped[0].reason, DropReason::kContextEditRemoved);
  EXPECT_EQ(rc.dropped[0].by_line, 5u);
}

TEST(ResumeContext, SystemMessagesPassIn15AndAreDroppedBy078) {
  Session s = session({msg("a", "", R"({"role":"system","content":"Be brief."})"), msg("b", "a", user("q"))});
  EXPECT_EQ(roles(s.get(PiVersion::k1_5)), (std::vector<std::string>{"system", "user"}));
  ResumeContext old = s.get(PiVersion::k0_78);
  EXPECT_EQ(roles(old), std::vector<std::string>{"user"});
  ASSERT_EQ(old.dropped.size(), 1u);
  EXPECT_EQ(old.dropped[0].reason, DropReason::kSystemRole);
}

TEST(ResumeContext, CustomMessagesAndMigratedHookMessagesAreUserMessages) {
  Session v2 =
      session({msg("a", "", R"({"role":"hookMessage","customType":"x","content":"from a hook"})"),
               R"({"type":"custom_message","id":"b","parentId":"a","customType":"n","content":"a note"})"},
              R"({"type":"session","version":2,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"})");
  ResumeContext rc = v2.get(PiVersion::k1_5);
  ASSERT_EQ(rc.messages.size(), 2u);
  EXPECT_EQ(rc.messages[0].source, SentSource::kCustomMessage);
  EXPECT_EQ(rc.messages[0].texts.at(0), "from a hook");
  EXPECT_EQ(rc.messages[1].role, "user");
  EXPECT_EQ(rc.messages[1].texts.at(0), "a note");
}

TEST(ResumeContext, PiAiThrowsOnAssistantContentItCannotRead) {
  Session string_content = session({msg("a", "", user("q")), msg("b", "a", assistant(R"("plain")"))});
  for (PiVersion v : {PiVersion::k0_78, PiVersion::k1_5}) {
    ResumeContext rc = string_content.get(v);
    EXPECT_TRUE(rc.loads);
    EXPECT_NE(rc.request_error, "");
    EXPECT_EQ(rc.request_error_line, 3u);
    EXPECT_TRUE(rc.messages.empty());
  }
  Session null_content = session({msg("a", "", user("q")), msg("b", "a", assistant("null"))});
  EXPECT_NE(null_content.get(PiVersion::k0_78).request_error, "");
  EXPECT_EQ(null_content.get(PiVersion::k1_5).request_error, "");  // 1.5 reads it as []
}

TEST(ResumeContext, NothingIsSentWhenPiDoesNotLoad) {
  Session s = session({msg("a", "", user("q"))}, R"({"type":"message","id":"x"})");
  ResumeContext rc = s.get(PiVersion::k1_5);
  EXPECT_FALSE(rc.loads);
  EXPECT_TRUE(rc.messages.empty());
}

TEST(ResumeContext, InvalidUtf8ReadsAsNodeDecodesIt) {
  Session s = session({msg("a", "", user("caf\xE9!"))});
  ResumeContext rc = s.get(PiVersion::k1_5);
  ASSERT_EQ(rc.messages.size(), 1u);
  EXPECT_EQ(rc.messages[0].texts.at(0), "caf\xEF\xBF\xBD!");
}

}  // namespace
}  // namespace pihydrate
