#include "pihydrate/line_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace pihydrate {
namespace {

struct Got {
  std::string bytes;
  std::uint64_t number, offset, length;
  bool has_newline, too_long;
};

std::vector<Got> read_all(const std::string& text, LineReaderOptions options = {}) {
  auto source = make_memory_source(text);
  LineReader reader(*source, options);
  std::vector<Got> out;
  Line line;
  while (reader.next(line))
    out.push_back({std::string(line.bytes), line.number, line.offset, line.length, line.has_newline, line.too_long});
  return out;
}

TEST(LineReader, SplitsOnNewlineAndNumbersFromOne) {
  auto lines = read_all("a\nbb\n\nccc\n");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].bytes, "a");
  EXPECT_EQ(lines[1].number, 2u);
  EXPECT_EQ(lines[1].offset, 2u);
  EXPECT_EQ(lines[2].bytes, "");
  EXPECT_EQ(lines[3].bytes, "ccc");
  EXPECT_TRUE(lines[3].has_newline);
}

TEST(LineReader, LastLineWithoutNewline) {
  auto lines = read_all("a\nb");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].bytes, "b");
  EXPECT_FALSE(lines[1].has_newline);
}

TEST(LineReader, KeepsCarriageReturn) {
  auto lines = read_all("a\r\nb\r\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].bytes, "a\r");
}

TEST(LineReader, LinesLongerThanTheReadChunk) {
  std::string big(10000, 'x');
  LineReaderOptions o;
  o.read_chunk = 7;  // forces many refills and growth
  auto lines = read_all(big + "\nshort\n" + big, o);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].bytes, big);
  EXPECT_EQ(lines[1].bytes, "short");
  EXPECT_EQ(lines[1].offset, 10001u);
  EXPECT_EQ(lines[2].bytes, big);
  EXPECT_FALSE(lines[2].has_newline);
}

TEST(LineReader, LineOverTheCapIsSkippedWithItsLength) {
  LineReaderOptions o;
  o.max_line_bytes = 100;
  o.read_chunk = 16;
  auto lines = read_all("ok\n" + std::string(1000, 'y') + "\nafter\n", o);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_TRUE(lines[1].too_long);
  EXPECT_EQ(lines[1].length, 1000u);
  EXPECT_EQ(lines[1].bytes, "");
  EXPECT_EQ(lines[2].bytes, "after");
  EXPECT_EQ(lines[2].number, 3u);
  EXPECT_EQ(lines[2].offset, 1004u);
}

TEST(LineReader, EmptyInputHasNoLines) { EXPECT_TRUE(read_all("").empty()); }

}  // namespace
}  // namespace pihydrate
