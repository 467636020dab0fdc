#include "core/entry_scanner.h"

#include <gtest/gtest.h>

namespace pihydrate {
namespace {

class ScannerTest : public ::testing::Test {
 protected:
  ScanStatus scan(std::string_view line, std::size_t start = 0) {
    entry = Entry();
    bad = BadLine();
    buffer.assign(line.begin(), line.end());
    buffer.push_back('\0');  // the scanner parses in place and needs the terminator
    EntryScanner scanner(arena, calls, details, 16);
    return scanner.scan(buffer.data(), line.size(), start, entry, bad);
  }
  std::vector<char> buffer;
  StringArena arena;
  std::vector<ToolCallRef> calls;
  std::deque<EntryDetails> details;
  Entry entry;
  BadLine bad;
};

TEST_F(ScannerTest, ExtractsTreeFieldsWithColumns) {
  ASSERT_EQ(scan(R"({"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z"})"),
            ScanStatus::kParsed);
  EXPECT_EQ(entry.type, EntryType::kMessage);
  EXPECT_EQ(entry.id.text, "a1b2c3d4");
  EXPECT_EQ(entry.id.column, 24u);
  EXPECT_EQ(entry.parent_id.kind, JsonKind::kNull);
  EXPECT_EQ(entry.parent_id.column, 46u);
  EXPECT_EQ(entry.timestamp.text, "2026-01-01T00:00:00.000Z");
}

TEST_F(ScannerTest, ExtractsMessageAndToolCalls) {
  ASSERT_EQ(scan(R"({"type":"message","message":{"role":"assistant","content":[{"type":"text","text":"x"},)"
                 R"({"id":"toolu_1","type":"toolCall","name":"read","arguments":{"id":"inner"}}],)"
                 R"("usage":{"input":1,"cost":{"total":0.1}},"stopReason":"toolUse","timestamp":1767322245678}})"),
            ScanStatus::kParsed);
  EXPECT_EQ(entry.role, Role::kAssistant);
  EXPECT_EQ(entry.content_kind, JsonKind::kArray);
  EXPECT_EQ(entry.usage_kind, JsonKind::kObject);
  EXPECT_EQ(entry.usage_cost_kind, JsonKind::kObject);
  EXPECT_EQ(entry.stop_reason, StopReason::kToolUse);
  EXPECT_EQ(entry.message_timestamp.text, "1767322245678");
  ASSERT_EQ(entry.tool_calls_count, 1u);
  EXPECT_EQ(calls[entry.tool_calls_begin].id, "toolu_1");  // not the nested "inner"
  EXPECT_EQ(calls[entry.tool_calls_begin].name, "read");
}

TEST_F(ScannerTest, RepeatedKeysFollowJsonParseLastWins) {
  ASSERT_EQ(scan(R"({"id":"first","id":"second"})"), ScanStatus::kParsed);
  EXPECT_EQ(entry.id.text, "second");
}

TEST_F(ScannerTest, BlankLinesIncludeUnicodeSpaces) {
  EXPECT_EQ(scan("   \t\r"), ScanStatus::kBlank);
  EXPECT_EQ(scan("\xC2\xA0"), ScanStatus::kBlank);
  EXPECT_EQ(scan(""), ScanStatus::kBlank);
}

TEST_F(ScannerTest, MalformedLineReportsColumnAndReason) {
  ASSERT_EQ(scan(R"({"a":tru})"), ScanStatus::kBad);
  EXPECT_EQ(bad.problem, LineProblem::kMalformed);
  EXPECT_EQ(bad.column, 9u);
  EXPECT_EQ(bad.reason, "Invalid value");
}

TEST_F(ScannerTest, GluedRecordsAreRecognised) {
  ASSERT_EQ(scan(R"({"a":1}{"b":2})"), ScanStatus::kBad);
  EXPECT_EQ(bad.problem, LineProblem::kGlued);
  EXPECT_EQ(bad.column, 8u);
}

TEST_F(ScannerTest, NulByteIsRejectedEvenAfterACompleteValue) {
  std::string line = std::string(R"({"a":1})") + '\0' + "junk";
  ASSERT_EQ(scan(line), ScanStatus::kBad);
  EXPECT_EQ(bad.problem, LineProblem::kNulByte);
  EXPECT_EQ(bad.column, 8u);
}

TEST_F(ScannerTest, DepthCapStopsDeepNestingWithoutRecursionOverflow) {
  std::string deep(100000, '[');
  ASSERT_EQ(scan(deep), ScanStatus::kBad);
  EXPECT_EQ(bad.problem, LineProblem::kTooDeep);
}

TEST_F(ScannerTest, ScalarRootsAndTruthiness) {
  ASSERT_EQ(scan("null"), ScanStatus::kParsed);
  EXPECT_EQ(entry.root, JsonKind::kNull);
  EXPECT_TRUE(entry.falsy);
  ASSERT_EQ(scan("0.0e5"), ScanStatus::kParsed);
  EXPECT_TRUE(entry.falsy);
  ASSERT_EQ(scan("42"), ScanStatus::kParsed);
  EXPECT_EQ(entry.root, JsonKind::kNumber);
  EXPECT_FALSE(entry.falsy);
  ASSERT_EQ(scan("[]"), ScanStatus::kParsed);
  EXPECT_EQ(entry.root, JsonKind::kArray);
  EXPECT_FALSE(entry.falsy);
}

TEST_F(ScannerTest, StartsAfterABomButKeepsPhysicalColumns) {
  ASSERT_EQ(scan("\xEF\xBB\xBF{\"id\":\"x\"}", 3), ScanStatus::kParsed);
  EXPECT_EQ(entry.id.column, 10u);
}

}  // namespace
}  // namespace pihydrate

namespace pihydrate {
namespace {

// The index's entry store: elements stay where they are while it grows
// across chunk boundaries, and iteration sees them in order.
TEST(ChunkedVectorTest, GrowsAcrossChunksWithoutMovingElements) {
  ChunkedVector<std::uint64_t, 4> v;
  EXPECT_TRUE(v.empty());
  v.push_back(0);
  const std::uint64_t* first = &v[0];
  for (std::uint64_t i = 1; i < 11; ++i) v.push_back(i * 10);
  EXPECT_EQ(v.size(), 11u);
  EXPECT_EQ(&v[0], first);
  EXPECT_EQ(v[4], 40u);
  EXPECT_EQ(v.back(), 100u);
  std::uint64_t expected = 0, seen = 0;
  for (std::uint64_t x : v) {
    EXPECT_EQ(x, expected);
    expected += 10;
    ++seen;
  }
  EXPECT_EQ(seen, 11u);
}

}  // namespace
}  // namespace pihydrate
