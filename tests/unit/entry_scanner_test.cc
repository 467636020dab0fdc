// EntryScanner and the session index: what one pass over a line finds, and the index on two threads.
#include "core/entry_scanner.h"
#include "core/spool_indexer.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "common/index_summary.h"
#include "core/utf8.h"
#include "pihydrate/errors.h"
#include "pihydrate/session_index.h"

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
  EXPECT_EQ(entry.id.text(), "a1b2c3d4");
  EXPECT_EQ(entry.id.column, 24u);
  EXPECT_EQ(entry.parent_id.kind, JsonKind::kNull);
  EXPECT_EQ(entry.parent_id.column, 46u);
  EXPECT_EQ(entry.timestamp.text(), "2026-01-01T00:00:00.000Z");
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
  EXPECT_EQ(entry.message_timestamp.text(), "1767322245678");
  ASSERT_EQ(entry.tool_calls_count, 1u);
  EXPECT_EQ(calls[entry.tool_calls_begin].id, "toolu_1");  // not the nested "inner"
  EXPECT_EQ(calls[entry.tool_calls_begin].name, "read");
}

TEST_F(ScannerTest, ContentBlanknessIsKnownWithoutReadingTheTexts) {
  // The fast path looks at a text only up to its first character that is
  // not white space; RapidJSON (which an exponent sends the line to) decodes
  // it. Both give the same.
  for (const std::string tail : {"", R"(,"n":1e3)"}) {
    auto message = [&](const std::string& content) {
      return R"({"type":"message","message":{"role":"user","content":)" + content + "}" + tail + "}";
    };
    ASSERT_EQ(scan(message(R"([{"type":"text","text":" \n\u00a0\u2028\t"},{"type":"text"},{"type":"text","text":5},)"
                           R"({"type":"thinking","thinking":""}])")),
              ScanStatus::kParsed)
        << tail;
    EXPECT_EQ(entry.content_blank_texts, 3u) << tail;
    EXPECT_TRUE(entry.content_has_thinking) << tail;
    EXPECT_FALSE(entry.content_has_other) << tail;
    ASSERT_EQ(scan(message(R"([{"type":"text","text":"\u0020x"},{"type":"text","text":"\u3000"}])")),
              ScanStatus::kParsed);
    EXPECT_EQ(entry.content_blank_texts, 1u) << tail;
    EXPECT_TRUE(entry.content_has_other) << tail;
    ASSERT_EQ(scan(message(R"(["not a block"])")), ScanStatus::kParsed);
    EXPECT_TRUE(entry.content_has_other) << tail;
    ASSERT_EQ(scan(message("\" \\t\u00a0 \"")), ScanStatus::kParsed);
    EXPECT_FALSE(entry.content_has_other) << tail;
    ASSERT_EQ(scan(message("\"\\u3000a\"")), ScanStatus::kParsed);
    EXPECT_TRUE(entry.content_has_other) << tail;
    ASSERT_EQ(scan(message("[]")), ScanStatus::kParsed);
    EXPECT_FALSE(entry.content_has_other || entry.content_has_thinking || entry.content_blank_texts) << tail;
  }
}

TEST_F(ScannerTest, RepeatedKeysFollowJsonParseLastWins) {
  ASSERT_EQ(scan(R"({"id":"first","id":"second"})"), ScanStatus::kParsed);
  EXPECT_EQ(entry.id.text(), "second");
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

// The scanner's UTF-8 verdict is find_invalid_utf8's on the line as it was,
// whether the fast path read it (checking strings as it goes) or RapidJSON
// did (which changes the line in place): a bad byte in a kept string, in a
// skipped tool output past a 64-byte block, after good sequences, in a line
// only RapidJSON reads, in a blank line, and none at all.
TEST_F(ScannerTest, Utf8VerdictIsTheFirstInvalidSequenceOfTheLineAsItWas) {
  const std::string output(100, 'x');
  const std::vector<std::string> lines = {
      "{\"type\":\"custom\",\"id\":\"a\xC3\x28\"}",
      "{\"type\":\"message\",\"message\":{\"role\":\"toolResult\",\"content\":[{\"type\":\"text\",\"text\":\"" +
          output + "\xE2\x82\xAC\xF0\x9F\x98\x80\\n\xED\xA0\x80" + output + "\xFF\"}]}}",
      "{\"type\":\"custom\",\"data\":\"\xC3\xA9\\u00e9\",\"n\":1e5,\"bad\":\"\xC0\xAF\"}",  // 1e5: RapidJSON's
      "{\"type\":\"custom\",\"data\":\"\\ud83d\\ude00 \xE2\x82\"}",                         // surrogates: RapidJSON's
      "\xC2\xA0\xC3",                                                                       // blank, then a bad byte
      "{\"type\":\"custom\",\"data\":\"" + output + "\xE2\x82\xAC\"}",
  };
  for (const std::string& line : lines) {
    for (bool fast : {true, false}) {
      buffer.assign(line.begin(), line.end());
      buffer.push_back('\0');
      EntryScanner scanner(arena, calls, details, 16);
      scanner.set_fast_path(fast);
      scanner.scan(buffer.data(), line.size(), 0, entry, bad);
      EXPECT_EQ(scanner.utf8_verdict(), find_invalid_utf8(line)) << fast << " " << line;
    }
  }
  EXPECT_NE(find_invalid_utf8(lines[1]), kUtf8Valid);  // the cases do hold bad bytes
  EXPECT_EQ(find_invalid_utf8(lines[5]), kUtf8Valid);
}

// Merging the two halves of an index appends one store to the other,
// adjusting each element, and empties the source.
TEST(ChunkedVectorTest, AppendConsumingAdjustsInOrderAndEmptiesTheSource) {
  ChunkedVector<std::uint64_t, 4> head, tail;
  for (std::uint64_t i = 0; i < 6; ++i) head.push_back(i);  // a partly filled last chunk
  for (std::uint64_t i = 0; i < 9; ++i) tail.push_back(i);
  head.append_consuming(std::move(tail), [](std::uint64_t& x) { x += 100; });
  ASSERT_EQ(head.size(), 15u);
  for (std::uint64_t i = 0; i < 6; ++i) EXPECT_EQ(head[i], i);
  for (std::uint64_t i = 0; i < 9; ++i) EXPECT_EQ(head[6 + i], 100 + i);
  EXPECT_TRUE(tail.empty());
  tail.push_back(7);  // still usable
  EXPECT_EQ(tail.back(), 7u);
}

}  // namespace
}  // namespace pihydrate

namespace pihydrate {
namespace {

// build_file_index scans a big file's halves on two threads; the merged
// index must be exactly the one sequential scan gives.
using test_support::index_summary;

TEST(FileIndexTest, TwoThreadsGiveTheSequentialIndex) {
  std::string text =
      "\xEF\xBB\xBF{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/tmp\"}\n";
  std::string padding(2000, 'x');
  for (int i = 0; text.size() < (std::size_t{10} << 20); ++i) {
    char id[16];
    std::snprintf(id, sizeof id, "%08x", i);
    switch (i % 9) {
      case 0: text += "\n"; break;                                                          // blank
      case 1: text += "{\"type\":\"message\",\"id\":\"" + std::string(id) + "\"\n"; break;  // truncated
      case 2:
        text += "{\"type\":\"label\",\"id\":\"" + std::string(id) + "\",\"targetId\":\"a\",\"label\":\"x\"}\r\n";
        break;
      case 3:
        text += "{\"type\":\"custom\",\"id\":\"" + std::string(id) + "\",\"data\":\"\xC3\x28\"}\n";
        break;  // bad UTF-8
      default:
        text += "{\"type\":\"message\",\"id\":\"" + std::string(id) +
                "\",\"parentId\":null,\"message\":{\"role\":\"assistant\","
                "\"content\":[{\"type\":\"toolCall\",\"id\":\"c" +
                std::string(id) + "\",\"name\":\"read\",\"arguments\":{}}," + "{\"type\":\"text\",\"text\":\"" +
                padding + "\"}]}}\n";
    }
  }
  text += "{\"type\":\"custom\",\"id\":\"last\"}";  // no newline at the end
  FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::fwrite(text.data(), 1, text.size(), file), text.size());
  std::fflush(file);
  const int fd = fileno(file);

  for (std::size_t cap : {std::size_t{50'000'000}, std::size_t{3000}}) {
    IndexOptions one;
    one.max_entries = cap;
    one.two_threads = false;
    IndexOptions two = one;
    two.two_threads = true;
    const std::string sequential = index_summary(build_file_index(fd, "f", one));
    const std::string parallel = index_summary(build_file_index(fd, "f", two));
    auto source = make_memory_source(text);
    const std::string streamed = index_summary(build_session_index(*source, "f", one));
    EXPECT_EQ(parallel, sequential) << "cap " << cap;
    EXPECT_EQ(streamed, sequential) << "cap " << cap;

    // Handed over in blocks of whole lines, of any size, the file is written
    // whole (past the entry cap too) and indexed as one scan would.
    FILE* spool = std::tmpfile();
    ASSERT_NE(spool, nullptr);
    std::mt19937 rng(static_cast<unsigned>(cap));
    std::string spooled;
    {
      SpoolIndexer indexer(fileno(spool), "f", one);
      SpoolBlock block;
      for (std::size_t at = 0; at < text.size();) {
        const std::size_t want = rng() % 3 == 0 ? rng() % 100 : rng() % (std::size_t{3} << 20);
        std::size_t end = text.find('\n', std::min(text.size(), at + want));
        end = end == std::string::npos ? text.size() : end + 1;
        block.bytes.assign(text, at, end - at);
        indexer.append(block);
        EXPECT_TRUE(block.bytes.empty());
        at = end;
      }
      spooled = index_summary(indexer.finish());
    }
    EXPECT_EQ(spooled, sequential) << "cap " << cap;
    std::string written(text.size() + 1, '\0');
    ASSERT_EQ(::pread(fileno(spool), written.data(), written.size(), 0), static_cast<ssize_t>(text.size()));
    written.resize(text.size());
    EXPECT_TRUE(written == text) << "cap " << cap;
    std::fclose(spool);
  }
  std::fclose(file);
}

// Known strings, looked up by their offset in the file; counts the lookups.
class KnownByOffset final : public KnownStrings {
 public:
  explicit KnownByOffset(const LongStrings& strings, std::uint64_t shift = 0) : strings_(strings), shift_(shift) {}
  std::uint64_t string_end(std::uint64_t offset) const override {
    ++lookups;
    const std::uint64_t end = strings_.end_of(offset);
    return end == 0 ? 0 : end + shift_;  // shift_: a wrong answer, one that is not past a quote
  }
  bool empty() const override { return strings_.size() == 0; }
  std::size_t min_length() const override { return LongStrings::kMinLength; }
  mutable std::atomic<std::size_t> lookups{0};

 private:
  const LongStrings& strings_;
  std::uint64_t shift_;
};

// An index notes the long strings it did not read (only in lines it read as
// plain JSON and found valid UTF-8), the same on one thread or two; told
// where they end, a scan steps over them and builds the same index; told a
// wrong end, one not past a quote, it scans the string after all.
TEST(FileIndexTest, KnownLongStringsAreSteppedOverForTheSameIndex) {
  std::string text = "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/tmp\"}\n";
  const std::string plain(1500, 'x');
  // Escapes (a quote among them, and a unicode one) and UTF-8 text.
  const std::string escaped = std::string(700, 'y') + "\\\"\\n\\u00e9\xC3\xA9" + std::string(700, 'z');
  std::size_t expected_long = 0, lookups = 0;  // per scan: strings noted, and looked up
  for (int i = 0; text.size() < (std::size_t{9} << 20); ++i) {
    const std::string id = std::to_string(i);
    switch (i % 6) {
      case 0:  // a long thinking text and a tool call: the call is read, the text stepped over
        text += "{\"type\":\"message\",\"id\":\"" + id +
                "\",\"parentId\":null,\"message\":{\"role\":\"assistant\","
                "\"content\":[{\"type\":\"thinking\",\"thinking\":\"" +
                plain + "\"},{\"type\":\"toolCall\",\"id\":\"c" + id +
                "\",\"name\":\"read\",\"arguments\":{\"path\":\"" + plain + "\"}}],\"stopReason\":\"toolUse\"}}\n";
        expected_long += 2;
        lookups += 2;
        break;
      case 1:  // tool output with escapes and non-ASCII text, in an ignored container
        text += "{\"type\":\"message\",\"id\":\"" + id + "\",\"parentId\":\"" + std::to_string(i - 1) +
                "\",\"message\":{\"role\":\"toolResult\",\"toolCallId\":\"c" + std::to_string(i - 1) +
                "\",\"content\":[{\"type\":\"text\",\"text\":\"" + escaped + "\"}]}}\n";
        ++expected_long;
        ++lookups;
        break;
      case 2:  // invalid UTF-8 in a long string: the line's strings are not noted
        text += "{\"type\":\"custom\",\"id\":\"" + id + "\",\"data\":\"" + plain + "\xC3\x28\" }\n";
        ++lookups;  // looked up, not known
        break;
      case 3:  // a long string the scan reads (a label's text) is not noted
        text += "{\"type\":\"label\",\"id\":\"" + id + "\",\"targetId\":\"0\",\"label\":\"" + plain + "\"}\n";
        break;
      case 4:  // RapidJSON reads a line with a surrogate escape: nothing noted
        text += "{\"type\":\"custom\",\"id\":\"" + id + "\",\"data\":\"" + plain + "\\ud83d\\ude00\"}\n";
        ++lookups;  // looked up, not known; the fast path then gives up on the escape
        break;
      default:  // short strings only
        text += "{\"type\":\"custom\",\"id\":\"" + id + "\",\"data\":\"short\"}\n";
    }
  }
  FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::fwrite(text.data(), 1, text.size(), file), text.size());
  std::fflush(file);
  const int fd = fileno(file);

  IndexOptions one;
  one.two_threads = false;
  one.record_long_strings = true;
  IndexOptions two = one;
  two.two_threads = true;
  const SessionIndex noted = build_file_index(fd, "f", one);
  ASSERT_EQ(noted.long_strings.size(), expected_long);
  for (std::size_t i = 0; i < expected_long; ++i) {
    const std::uint64_t at = noted.long_strings.begin(i), length = noted.long_strings.length(i);
    ASSERT_GE(length, LongStrings::kMinLength);
    EXPECT_EQ(text[at], '"');
    EXPECT_EQ(text[at + length - 1], '"');
    if (i > 0) {
      EXPECT_GT(at, noted.long_strings.begin(i - 1));
    }
  }
  const std::string expected = index_summary(noted);
  EXPECT_EQ(index_summary(build_file_index(fd, "f", two)), expected);

  IndexOptions not_noting = two;
  not_noting.record_long_strings = false;
  const std::string scanned = index_summary(build_file_index(fd, "f", not_noting));
  for (std::uint64_t shift : {0u, 1u}) {
    KnownByOffset known(noted.long_strings, shift);
    IndexOptions stepping = not_noting;
    stepping.known_strings = &known;
    EXPECT_EQ(index_summary(build_file_index(fd, "f", stepping)), scanned) << "shift " << shift;
    stepping.two_threads = false;
    EXPECT_EQ(index_summary(build_file_index(fd, "f", stepping)), scanned) << "shift " << shift;
    // Each long string the scans did not read was looked up once per scan;
    // no shorter one was.
    EXPECT_EQ(known.lookups.load(), 2 * lookups) << "shift " << shift;
  }
  // Known strings are not scanned at all: told that the strings with a bad
  // byte are known too, the scan does not see the bytes (which is why only
  // strings checked before may be known). An answer that does not land just
  // past a quote is not taken, and the string is scanned: a space follows
  // each bad string, so stepping one byte too far would still parse.
  LongStrings with_bad;
  const std::string bad_string = "\"" + plain + "\xC3\x28\"";
  std::size_t k = 0;
  for (std::size_t at = text.find('"'); at != std::string::npos; at = text.find('"', at + 1)) {
    const bool noted_here = k < noted.long_strings.size() && noted.long_strings.begin(k) == at;
    if (noted_here || text.compare(at, bad_string.size(), bad_string) == 0)
      with_bad.add(at, noted_here ? noted.long_strings.length(k++) : static_cast<std::uint32_t>(bad_string.size()));
  }
  ASSERT_GT(with_bad.size(), expected_long);
  const SessionIndex scanned_index = build_file_index(fd, "f", not_noting);
  ASSERT_GT(scanned_index.invalid_utf8_count, 0u);
  KnownByOffset trusting(with_bad);
  IndexOptions stepping = not_noting;
  stepping.known_strings = &trusting;
  EXPECT_EQ(build_file_index(fd, "f", stepping).invalid_utf8_count, 0u);
  KnownByOffset one_too_far(with_bad, 1);
  stepping.known_strings = &one_too_far;
  EXPECT_EQ(build_file_index(fd, "f", stepping).invalid_utf8_count, scanned_index.invalid_utf8_count);
  std::fclose(file);
}

TEST(FileIndexTest, ASpoolThatCannotBeWrittenFailsTheWriter) {
  const int read_only = ::open("/dev/null", O_RDONLY);
  ASSERT_GE(read_only, 0);
  SpoolBlock block;
  EXPECT_THROW(
      {
        SpoolIndexer indexer(read_only, "spool");
        for (int i = 0; i < 8; ++i) {  // the thread's error reaches a later append or finish
          block.bytes = "{\"type\":\"session\"}\n";
          indexer.append(block);
        }
        indexer.finish();
      },
      IoError);
  {
    SpoolIndexer abandoned(read_only, "spool");  // dropped without finish: stops, does not hang
    block.bytes = "{}\n";
    abandoned.append(block);
  }
  ::close(read_only);
}

}  // namespace
}  // namespace pihydrate
