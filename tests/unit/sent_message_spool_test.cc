// SentMessageSpool: the messages `context` builds in one pass come back
// whole and in order after its head is written.
#include "pi/sent_message_spool.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pihydrate/errors.h"

namespace pihydrate {
namespace {

// Every member set to something other than its default.
SentMessage full_message(const std::string& text) {
  SentMessage m;
  m.role = "toolResult";
  m.source = SentSource::kSynthesized;
  m.line = 123456789012ull;
  m.entry_id = {JsonKind::kNumber, "42"};
  m.texts = {text, "", "second"};
  m.tool_calls = {{{JsonKind::kString, "call_1"}, {JsonKind::kString, "bash"}, R"({"command":"ls"})"},
                  {{JsonKind::kNull, "null"}, {JsonKind::kMissing, ""}, ""}};
  m.tool_call_id = {JsonKind::kString, "call_0"};
  m.is_error = true;
  m.orphan = true;
  m.images = 2;
  m.thinking = 3;
  m.thinking_dropped = 4;
  m.thinking_as_text = 5;
  m.edited = true;
  m.call_line = 77;
  return m;
}

void expect_same(const SentMessage& a, const SentMessage& b) {
  EXPECT_EQ(a.role, b.role);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.line, b.line);
  EXPECT_EQ(a.entry_id, b.entry_id);
  EXPECT_EQ(a.texts, b.texts);
  ASSERT_EQ(a.tool_calls.size(), b.tool_calls.size());
  for (std::size_t i = 0; i < a.tool_calls.size(); ++i) {
    EXPECT_EQ(a.tool_calls[i].id, b.tool_calls[i].id);
    EXPECT_EQ(a.tool_calls[i].name, b.tool_calls[i].name);
    EXPECT_EQ(a.tool_calls[i].arguments, b.tool_calls[i].arguments);
  }
  EXPECT_EQ(a.tool_call_id, b.tool_call_id);
  EXPECT_EQ(a.is_error, b.is_error);
  EXPECT_EQ(a.orphan, b.orphan);
  EXPECT_EQ(a.images, b.images);
  EXPECT_EQ(a.thinking, b.thinking);
  EXPECT_EQ(a.thinking_dropped, b.thinking_dropped);
  EXPECT_EQ(a.thinking_as_text, b.thinking_as_text);
  EXPECT_EQ(a.edited, b.edited);
  EXPECT_EQ(a.call_line, b.call_line);
}

TEST(SentMessageSpool, EveryMemberComesBack) {
  const SentMessage sent = full_message("first text");
  std::string bytes;
  append_sent_message(sent, bytes);
  append_sent_message(SentMessage(), bytes);
  std::size_t at = 0;
  SentMessage back;
  ASSERT_TRUE(read_sent_message(bytes, at, back));
  expect_same(sent, back);
  ASSERT_TRUE(read_sent_message(bytes, at, back));
  expect_same(SentMessage(), back);
  EXPECT_EQ(at, bytes.size());
  EXPECT_FALSE(read_sent_message(bytes, at, back));
}

TEST(SentMessageSpool, ACutMessageWaitsAndADamagedOneThrows) {
  std::string bytes;
  append_sent_message(full_message("text"), bytes);
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    std::size_t at = 0;
    SentMessage m;
    EXPECT_FALSE(read_sent_message(std::string_view(bytes).substr(0, cut), at, m)) << cut;
    EXPECT_EQ(at, 0u);
  }
  std::string damaged = bytes;
  damaged[8] = '\x7f';  // the role's size now runs past the message
  std::size_t at = 0;
  SentMessage m;
  EXPECT_THROW(read_sent_message(damaged, at, m), IoError);
}

TEST(SentMessageSpool, ReplaysInOrderAcrossItsBuffers) {
  SentMessageSpool spool;
  std::vector<SentMessage> sent;
  for (int i = 0; i < 300; ++i) {
    // Some messages are bigger than the MiB the spool writes and reads at a time.
    sent.push_back(full_message(std::string(i % 100 == 7 ? (3u << 20) : 5000u, static_cast<char>('a' + i % 26))));
    sent.back().line = static_cast<std::uint64_t>(i);
    spool.add(sent.back());
  }
  std::vector<SentMessage> back;
  spool.replay([&](SentMessage&& m) { back.push_back(std::move(m)); });
  ASSERT_EQ(back.size(), sent.size());
  for (std::size_t i = 0; i < sent.size(); ++i) expect_same(sent[i], back[i]);
}

}  // namespace
}  // namespace pihydrate
