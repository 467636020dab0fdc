#include "pihydrate/line_reader.h"
#include "core/utf8.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
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

namespace pihydrate {
namespace {

// The UTF-8 check skips ASCII 64 bytes at a time: invalid bytes at every
// position around those blocks must still be found, and valid sequences
// that straddle them must pass.
TEST(Utf8Test, FindsInvalidBytesAtEveryPositionAroundTheFastPath) {
  for (std::size_t at : {0, 1, 7, 8, 63, 64, 65, 127, 128, 199}) {
    std::string text(200, 'a');
    text[at] = static_cast<char>(0xFF);
    EXPECT_EQ(find_invalid_utf8(text), at) << at;
  }
  for (std::size_t at : {0, 62, 63, 64, 126, 190}) {
    std::string text(200, 'a');
    text.replace(at, 3, "\xE2\x82\xAC");  // U+20AC, three bytes
    EXPECT_EQ(find_invalid_utf8(text), kUtf8Valid) << at;
  }
  std::string truncated(130, 'a');
  truncated += "\xE2\x82";
  EXPECT_EQ(find_invalid_utf8(truncated), 130u);
  EXPECT_EQ(find_invalid_utf8(std::string(64, 'a') + "\xED\xA0\x80"), 64u);  // an encoded surrogate
  // ASCII to the very end of a buffer exactly 64 or 128 bytes long (the
  // fast path's step): nothing past it is read (ASan checks this).
  for (std::size_t size : {64u, 128u}) {
    const std::unique_ptr<char[]> exact(new char[size]);
    std::memset(exact.get(), 'a', size);
    EXPECT_EQ(find_invalid_utf8(std::string_view(exact.get(), size)), kUtf8Valid) << size;
  }
}

}  // namespace
}  // namespace pihydrate
