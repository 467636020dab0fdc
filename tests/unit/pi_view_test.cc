// PiView: the leaf, duplicate ids, cycles, BOMs, null lines, migration and pairing, per pi version.
#include "pihydrate/pi_view.h"

#include <gtest/gtest.h>

namespace pihydrate {
namespace {

SessionIndex index_of(const std::string& text) {
  auto source = make_memory_source(text);
  return build_session_index(*source, "t.jsonl");
}

const char* kHeader = R"({"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/tmp"})";

std::string msg(const char* id, const char* parent, const char* role, const char* extra = "") {
  std::string p = parent ? std::string("\"") + parent + "\"" : "null";
  return std::string(R"({"type":"message","id":")") + id + R"(","parentId":)" + p + R"(,"message":{"role":")" + role +
         R"(","content":[])" + extra + "}}";
}

TEST(PiView, LeafIsTheLastEntryAndPathFollowsParents) {
  SessionIndex idx = index_of(std::string(kHeader) + "\n" + msg("a", nullptr, "user") + "\n" +
                              msg("b", "a", "assistant") + "\n" + msg("c", "a", "assistant") + "\n");
  PiView v = build_pi_view(idx, PiVersion::k1_5);
  ASSERT_TRUE(v.loads());
  EXPECT_EQ(v.leaf, 2);
  ASSERT_EQ(v.path.size(), 2u);  // a, c: b is an abandoned branch
  EXPECT_EQ(v.path[1], 2u);
  EXPECT_EQ(v.context.size(), 2u);
}

TEST(PiView, DuplicateIdsLaterWins) {
  SessionIndex idx = index_of(std::string(kHeader) + "\n" + msg("a", nullptr, "user") + "\n" +
                              msg("a", nullptr, "user") + "\n" + msg("z", "a", "assistant") + "\n");
  PiView v = build_pi_view(idx, PiVersion::k1_5);
  EXPECT_TRUE(v.shadowed[0]);
  ASSERT_EQ(v.path.size(), 2u);
  EXPECT_EQ(v.path[0], 1u);
}

TEST(PiView, CycleHangsOldPiAndCrashesNewPi) {
  std::string text = std::string(kHeader) + "\n" + msg("a", "b", "user") + "\n" + msg("b", "a", "assistant") + "\n";
  SessionIndex idx = index_of(text);
  EXPECT_EQ(build_pi_view(idx, PiVersion::k0_78).outcome, LoadOutcome::kHang);
  EXPECT_EQ(build_pi_view(idx, PiVersion::k1_5).outcome, LoadOutcome::kCrash);
}

TEST(PiView, BomIsFatalOnlyForNewPi) {
  SessionIndex idx = index_of(std::string("\xEF\xBB\xBF") + kHeader + "\n" + msg("a", nullptr, "user") + "\n");
  EXPECT_EQ(build_pi_view(idx, PiVersion::k0_78).outcome, LoadOutcome::kLoads);
  EXPECT_EQ(build_pi_view(idx, PiVersion::k1_5).outcome, LoadOutcome::kRefused);
}

TEST(PiView, NullLineCrashesOldPiOnly) {
  SessionIndex idx = index_of(std::string(kHeader) + "\nnull\n" + msg("a", nullptr, "user") + "\n");
  EXPECT_EQ(build_pi_view(idx, PiVersion::k0_78).outcome, LoadOutcome::kCrash);
  EXPECT_EQ(build_pi_view(idx, PiVersion::k1_5).outcome, LoadOutcome::kLoads);
}

TEST(PiView, UnversionedTreeIsFlattenedInFileOrder) {
  std::string header = R"({"type":"session","id":"s1","cwd":"/tmp"})";
  SessionIndex idx = index_of(header + "\n" + msg("a", nullptr, "user") + "\n" + msg("b", "a", "assistant") + "\n" +
                              msg("c", "a", "assistant") + "\n");
  PiView v = build_pi_view(idx, PiVersion::k1_5);
  EXPECT_TRUE(v.migrates_v1);
  EXPECT_EQ(v.path.size(), 3u);  // the abandoned b is back in context
}

TEST(PiView, V1CompactionIndexCountsTheHeader) {
  std::string header = R"({"type":"session","id":"s1","cwd":"/tmp"})";
  std::string text = header + "\n" + R"({"type":"message","message":{"role":"user","content":"q1"}})" + "\n" +
                     R"({"type":"message","message":{"role":"assistant","content":[]}})" + "\n" +
                     R"({"type":"compaction","summary":"S","firstKeptEntryIndex":2})" + "\n";
  PiView v = build_pi_view(index_of(text), PiVersion::k1_5);
  ASSERT_TRUE(v.loads());
  EXPECT_TRUE(v.first_kept_found);
  ASSERT_EQ(v.context.size(), 2u);  // summary + the assistant (index 2)
  EXPECT_EQ(v.context[0].kind, ContextKind::kCompactionSummary);
  EXPECT_EQ(v.context[1].node, 1u);
}

TEST(PiView, PairingFindsOrphanMissingAndSkipped) {
  std::string text =
      std::string(kHeader) + "\n" + msg("u", nullptr, "user") + "\n" +
      msg("a1", "u", "assistant", R"(,"stopReason":"aborted")") + "\n" +
      R"({"type":"message","id":"r0","parentId":"a1","message":{"role":"toolResult","toolCallId":"t0","content":[]}})" +
      "\n";
  // The aborted assistant has no tool call in `msg`, so its result is a plain orphan.
  SessionIndex idx = index_of(text);
  PiView v = build_pi_view(idx, PiVersion::k1_5);
  auto findings = find_pairing_issues(idx, v);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].issue, PairingIssue::kOrphanResult);
  EXPECT_EQ(findings[0].tool_call_id, "t0");
}

TEST(PiView, ToolCallIdRule) {
  EXPECT_TRUE(is_valid_tool_call_id("toolu_01ABC-x"));
  EXPECT_FALSE(is_valid_tool_call_id(""));
  EXPECT_FALSE(is_valid_tool_call_id("call|abc"));
  EXPECT_FALSE(is_valid_tool_call_id(std::string(65, 'a')));
}

}  // namespace
}  // namespace pihydrate

namespace pihydrate {
namespace {

TEST(PiProfiles, VersionsAreReadAsNamesOrReleases) {
  EXPECT_EQ(parse_pi_version("0.78"), PiVersion::k0_78);
  EXPECT_EQ(parse_pi_version("1.5.2"), PiVersion::k1_5);
  EXPECT_EQ(parse_pi_version("1.6"), PiVersion::k1_6);
  EXPECT_EQ(parse_pi_version("1.6.0"), PiVersion::k1_6);
  EXPECT_EQ(parse_pi_version("1.6.12"), PiVersion::k1_6);
  for (const char* unknown : {"", "1", "1.", "1.6.", "1.6.x", "1.60", "2.0", "0.78.0.1", "v1.6"})
    EXPECT_FALSE(parse_pi_version(unknown).has_value()) << unknown;
  EXPECT_EQ(known_pi_versions(), "0.78, 1.5, 1.6");
  EXPECT_EQ(newest_pi_version(), pi_profiles().back().version);
}

TEST(PiProfiles, EachRowIsFoundByItsOwnNameAndRelease) {
  for (const PiProfile& p : pi_profiles()) {
    EXPECT_EQ(parse_pi_version(p.name), p.version);
    EXPECT_EQ(parse_pi_version(p.release), p.version);
    EXPECT_EQ(&pi_profile(p.version), &p);
  }
}

}  // namespace
}  // namespace pihydrate
