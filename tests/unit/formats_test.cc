// Formats pi defines: the session id rule, ISO-8601 times, file names and the agent-dir encoding.
#include "pihydrate/formats.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>

namespace pihydrate {
namespace {

TEST(Formats, SessionIdRule) {
  EXPECT_TRUE(is_valid_session_id("019a6f3e-5b2c-7d41-9e8f-2a7c4b1d6e90"));
  EXPECT_TRUE(is_valid_session_id("a"));
  EXPECT_TRUE(is_valid_session_id("a.b_c-d"));
  EXPECT_FALSE(is_valid_session_id(""));
  EXPECT_FALSE(is_valid_session_id("-a"));
  EXPECT_FALSE(is_valid_session_id("a."));
  EXPECT_FALSE(is_valid_session_id("../x"));
  EXPECT_FALSE(is_valid_session_id("a/b"));
}

TEST(Formats, Iso8601) {
  EXPECT_TRUE(is_iso8601("2026-01-02T03:04:05.678Z"));
  EXPECT_TRUE(is_iso8601("2026-01-02T03:04:05Z"));
  EXPECT_TRUE(is_iso8601("2026-01-02T03:04:05.678+02:00"));
  EXPECT_FALSE(is_iso8601("2026-01-02 03:04:05Z"));
  EXPECT_FALSE(is_iso8601("1767322245678"));
  EXPECT_FALSE(is_iso8601("2026-01-02T03:04:05."));
}

// hex8_id writes its digits itself; printf's "%08x" of the folded hash is what it must give.
TEST(Formats, Hex8IdIsPrintfsHexOfTheFoldedHash) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 100000; ++i) {
    const std::uint64_t hash = i < 4 ? std::uint64_t{0} - static_cast<std::uint64_t>(i) : rng() >> (i % 64);
    const std::uint64_t folded = hash ^ (hash >> 29);
    char expected[9];
    std::snprintf(expected, sizeof expected, "%08x", static_cast<unsigned>(folded & 0xffffffffu));
    ASSERT_EQ(hex8_id(hash), expected) << hash;
  }
  EXPECT_EQ(hex8_id(0), "00000000");
}

TEST(Formats, FileNameAndAgentDirEncodingFollowPi) {
  EXPECT_EQ(session_file_name("2026-11-22T03:17:16.426Z", "01a2"), "2026-11-22T03-17-16-426Z_01a2.jsonl");
  EXPECT_EQ(encode_cwd_for_agent_dir("/tmp/proj x:y/sub"), "--tmp-proj x-y-sub--");
  EXPECT_EQ(encode_cwd_for_agent_dir("C:\\Users\\me"), "--C--Users-me--");
  EXPECT_EQ(encode_cwd_for_agent_dir("/"), "----");
}

}  // namespace
}  // namespace pihydrate
