// LineReader (lines, positions, CR kept, the line cap, lent lines) and the UTF-8 check.
#include "pihydrate/line_reader.h"
#include "core/utf8.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
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

// A source made of pieces: each is lent (a copy it owns until the next
// call) or read, as `lend` says. Lending a piece that ends inside a line
// breaks lend's contract; the reader copies what is left of it then.
class PieceSource final : public ByteSource {
 public:
  PieceSource(std::vector<std::string> pieces, std::vector<bool> lend)
      : pieces_(std::move(pieces)), lend_(std::move(lend)) {}
  char* lend(std::size_t& size) override {
    size = 0;
    while (at_ < pieces_.size() && pieces_[at_].empty()) ++at_;
    if (at_ == pieces_.size() || offset_ != 0 || !lend_[at_]) return nullptr;
    lent_ = pieces_[at_++];
    size = lent_.size();
    ++lent_count;
    return lent_.data();
  }
  std::size_t read(char* buffer, std::size_t size) override {
    while (at_ < pieces_.size() && offset_ == pieces_[at_].size()) ++at_, offset_ = 0;
    if (at_ == pieces_.size()) return 0;
    const std::size_t n = std::min(size, pieces_[at_].size() - offset_);
    std::memcpy(buffer, pieces_[at_].data() + offset_, n);
    offset_ += n;
    return n;
  }
  int lent_count = 0;

 private:
  std::vector<std::string> pieces_;
  std::vector<bool> lend_;
  std::size_t at_ = 0, offset_ = 0;
  std::string lent_;
};

// Lines read where a source lent them are the lines a copying read gives
// (bytes, numbers, offsets, the last line without a newline, lines over
// the cap), wherever the pieces are cut and whichever are lent; and a lent
// line is handed out in place, writable, '\0'-terminated.
TEST(LineReader, LentLinesAreTheLinesReadCopied) {
  std::mt19937 rng(11);
  int lent = 0;
  for (int round = 0; round < 300; ++round) {
    std::string text;
    const int lines = static_cast<int>(rng() % 12);
    for (int k = 0; k < lines; ++k) {
      text += std::string(rng() % 3 == 0 ? rng() % 200 : rng() % 20, static_cast<char>('a' + k % 26));
      if (k + 1 < lines || rng() % 2) text += '\n';
    }
    LineReaderOptions options;
    options.read_chunk = 1 + rng() % 64;
    if (rng() % 3 == 0) options.max_line_bytes = 50;
    std::vector<std::string> pieces;
    std::vector<bool> lend;
    for (std::size_t at = 0; at < text.size();) {
      // Mostly whole lines, as lend promises; sometimes a cut inside one.
      std::size_t end = rng() % 4 ? text.find('\n', at + rng() % 80) : at + 1 + rng() % 40;
      end = end == std::string::npos || end >= text.size() ? text.size() : end + (rng() % 4 ? 1 : 0);
      pieces.push_back(text.substr(at, end - at));
      lend.push_back(rng() % 3 != 0);
      at = end;
    }
    PieceSource source(pieces, lend);
    LineReader reader(source, options);
    std::vector<Got> got;
    Line line;
    while (reader.next(line)) {
      if (line.data) {
        EXPECT_EQ(line.data[line.bytes.size()], '\0');
        EXPECT_EQ(static_cast<const void*>(line.data), static_cast<const void*>(line.bytes.data()));
      }
      got.push_back({std::string(line.bytes), line.number, line.offset, line.length, line.has_newline, line.too_long});
    }
    lent += source.lent_count;
    const std::vector<Got> expected = read_all(text, options);
    ASSERT_EQ(got.size(), expected.size()) << "round " << round;
    for (std::size_t k = 0; k < got.size(); ++k) {
      EXPECT_EQ(got[k].bytes, expected[k].bytes) << "round " << round << ", line " << k;
      EXPECT_EQ(got[k].number, expected[k].number);
      EXPECT_EQ(got[k].offset, expected[k].offset);
      EXPECT_EQ(got[k].length, expected[k].length);
      EXPECT_EQ(got[k].has_newline, expected[k].has_newline);
      EXPECT_EQ(got[k].too_long, expected[k].too_long);
    }
  }
  EXPECT_GT(lent, 200);  // lent whenever the reader had nothing left
}

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
