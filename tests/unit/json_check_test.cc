// The quick JSON syntax check: never accepting what RapidJSON rejects, its scans, its second thread.
#include "core/json_check.h"
#include "core/utf8.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <functional>

#include <random>
#include <string>
#include <vector>

#include <rapidjson/reader.h>

namespace pihydrate {
namespace {

// RapidJSON's verdict with the flags the thread reader uses, and a depth cap.
class Depth : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Depth> {
 public:
  explicit Depth(std::size_t max) : max_(max) {}
  bool Default() { return true; }
  bool RawNumber(const char*, rapidjson::SizeType, bool) { return true; }
  bool StartObject() { return ++depth_ <= max_; }
  bool StartArray() { return ++depth_ <= max_; }
  bool EndObject(rapidjson::SizeType) { return --depth_, true; }
  bool EndArray(rapidjson::SizeType) { return --depth_, true; }

 private:
  std::size_t max_, depth_ = 0;
};

bool rapidjson_accepts(const std::string& text, std::size_t max_depth) {
  rapidjson::StringStream stream(text.c_str());
  Depth handler(max_depth);
  rapidjson::Reader reader;
  return !reader.Parse<rapidjson::kParseNumbersAsStringsFlag>(stream, handler).IsError();
}

TEST(JsonCheckTest, AcceptsPlainJson) {
  for (const char* text : {"{}", "[]", " {\"a\" : [1, -0, 0.25, true, false, null, \"x\\\"y\\\\z\\n\\u00e9\"]}\n",
                           "\"s\"", "12", "{\"k\":{\"k\":{\"k\":[]}}}", "[\"\\/\\b\\f\\r\\t\"]"})
    EXPECT_TRUE(is_certainly_valid_json(text, 16)) << text;
}

TEST(JsonCheckTest, UnsureOfWhatOnlyRapidJsonDecides) {
  for (const char* text : {"",
                           " ",
                           "{",
                           "[1,]",
                           "{,}",
                           "{\"a\"}",
                           "{\"a\":}",
                           "[01]",
                           "[1.]",
                           "[-]",
                           "[1e5]",
                           "[\"\\ud83d\\ude00\"]",
                           "[\"\\uDC00\"]",
                           "[\"\\x\"]",
                           "[\"\\u12g4\"]",
                           "[\"tab\there\"]",
                           "{} {}",
                           "[tru]",
                           "nul",
                           "[1 2]",
                           "{\"a\":1,}",
                           "[\"unterminated]"})
    EXPECT_FALSE(is_certainly_valid_json(text, 16)) << text;
  EXPECT_FALSE(is_certainly_valid_json("[[[]]]", 2));
  EXPECT_TRUE(is_certainly_valid_json("[[]]", 2));
  EXPECT_FALSE(is_certainly_valid_json("[" + std::string(400, '9') + "]", 16));
}

// Differential: whatever the quick check calls certainly valid, RapidJSON
// accepts. Random texts from JSON's own alphabet, and mutations of a real one.
TEST(JsonCheckTest, NeverAcceptsWhatRapidJsonRejects) {
  std::mt19937 rng(7);
  const std::string alphabet = "{}[]:,\"\\ 0123456789.-+eEtrufalsn\tu\nabcdDF8";
  const std::string seed =
      "{\"entries\":[{\"id\":\"e1\",\"kind\":\"chat\",\"text\":\"a \\\"quoted\\\" \\\\ word\\u00e9\"},"
      "{\"n\":[1,-2.5,0,true,false,null],\"o\":{}}]}";
  int accepted = 0;
  for (int round = 0; round < 200000; ++round) {
    std::string text;
    if (round % 2 == 0) {
      text = seed;
      for (int edits = 1 + static_cast<int>(rng() % 3); edits > 0; --edits) {
        std::size_t at = rng() % text.size();
        switch (rng() % 3) {
          case 0: text[at] = alphabet[rng() % alphabet.size()]; break;
          case 1: text.erase(at, 1); break;
          default: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        }
      }
    } else {
      std::size_t n = 1 + rng() % 12;
      for (std::size_t i = 0; i < n; ++i) text += alphabet[rng() % alphabet.size()];
    }
    const std::size_t depth = 1 + rng() % 4;
    if (is_certainly_valid_json(text, depth)) {
      ++accepted;
      ASSERT_TRUE(rapidjson_accepts(text, depth)) << "depth " << depth << ": " << text;
    }
  }
  EXPECT_GT(accepted, 1000);  // the comparison saw many accepted texts
}

// The string scan, one byte at a time: what scan_string_contents must
// give for any input, however its 64-byte blocks fall.
const char* reference_scan(const char* p, const char* end, bool check_utf8, StringScan& scan) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
  for (; p < end;) {
    const auto c = static_cast<unsigned char>(*p);
    if (c == '"') return p;
    if (c < 0x20) return nullptr;
    if (c >= 0x80 && check_utf8) {
      const std::size_t length = utf8_sequence_length(reinterpret_cast<const unsigned char*>(p), end - p);
      if (length == 0 && scan.first_invalid_utf8 == nullptr) scan.first_invalid_utf8 = p;
      p += length == 0 ? 1 : length;
    } else if (c == '\\') {
      scan.escaped = true;
      if (end - p < 2) return nullptr;
      if (p[1] == 'u') {
        if (end - p < 6 || !hex(p[2]) || !hex(p[3]) || !hex(p[4]) || !hex(p[5])) return nullptr;
        if ((p[2] == 'd' || p[2] == 'D') && !(p[3] >= '0' && p[3] <= '7')) return nullptr;
        p += 6;
      } else if (std::string_view("\"\\/bfnrt").find(p[1]) != std::string_view::npos) {
        p += 2;
      } else {
        return nullptr;
      }
    } else {
      ++p;
    }
  }
  return nullptr;
}

// Scans `text` both ways; what they give must agree. Returns the closing
// quote, or nullptr. `earlier_invalid`: an earlier string of the value
// already held invalid UTF-8, which stays the first.
const char* expect_same_scan(const std::string& text, bool check_utf8, bool earlier_invalid = false) {
  static const char earlier = 0;
  StringScan expected, actual;
  if (earlier_invalid) expected.first_invalid_utf8 = actual.first_invalid_utf8 = &earlier;
  const char* end = text.data() + text.size();
  const char* want = reference_scan(text.data(), end, check_utf8, expected);
  const char* got = check_utf8 ? scan_string_contents<true>(text.data(), end, actual)
                               : scan_string_contents<false>(text.data(), end, actual);
  EXPECT_EQ(got, want) << check_utf8 << " " << text;
  if (got == nullptr || got != want) return nullptr;
  EXPECT_EQ(actual.escaped, expected.escaped) << text;
  EXPECT_EQ(actual.first_invalid_utf8, expected.first_invalid_utf8) << text;
  return got;
}

// Each string-scan comparison runs with every block walk this processor
// has (SSE2, and AVX2 where there is one), the walk before main last.
void for_each_block_walk(const std::function<void()>& body) {
  std::vector<StringScanWalk> walks = {StringScanWalk::kSse2};
  if (string_scan_walk_available(StringScanWalk::kAvx2)) walks.push_back(StringScanWalk::kAvx2);
  for (StringScanWalk walk : walks) {
    SCOPED_TRACE(walk == StringScanWalk::kAvx2 ? "AVX2 walk" : "SSE2 walk");
    select_string_scan_walk(walk);
    body();
    if (::testing::Test::HasFailure()) break;
  }
  select_string_scan_walk(walks.back());
}

// Random string contents dense with what needs a look (escapes, UTF-8 good
// and bad, control bytes, quotes) at every offset from a 64-byte block's edge.
TEST(JsonCheckTest, StringScanMatchesTheByteByByteScan) {
  for_each_block_walk([] {
    std::mt19937 rng(11);
    const std::vector<std::string> pieces = {"a",
                                             "bcdefgh",
                                             "0123456789abcdef0123456789abcdef",
                                             "\\n",
                                             "\\\"",
                                             "\\\\",
                                             "\\u00e9",
                                             "\\uD800",
                                             "\\ud7ff",
                                             "\\u12",
                                             "\\x",
                                             "\\",
                                             "\"",
                                             "\t",
                                             "\\t",
                                             "\\/",
                                             "\\b",
                                             "\\f",
                                             "\\r",
                                             "\\a",
                                             "\\v",
                                             "\\U",
                                             "\xC3\xA9",
                                             "\xE2\x82\xAC",
                                             "\xF0\x9F\x98\x80",
                                             "\xC3",
                                             "\xE2\x82",
                                             "\xED\xA0\x80",
                                             "\xFF",
                                             "\x80",
                                             "\xC0\xAF"};
    int closed = 0, invalid_utf8 = 0;
    for (int round = 0; round < 100000; ++round) {
      std::string text;
      const std::size_t target = rng() % 300;
      while (text.size() < target) {
        // Mostly plain bytes, so strings often run past a block.
        const std::size_t pick = rng() % (pieces.size() * 3);
        text += pick < pieces.size() ? pieces[pick] : pieces[pick % 3];
      }
      for (bool check_utf8 : {false, true}) {
        expect_same_scan(text, check_utf8, true);
        const char* got = expect_same_scan(text, check_utf8);
        if (::testing::Test::HasFailure()) return;
        if (got == nullptr) continue;
        ++closed;
        if (check_utf8) {
          // And the verdict is find_invalid_utf8's on the contents.
          StringScan scan;
          scan_string_contents<true>(text.data(), text.data() + text.size(), scan);
          const std::size_t bad = find_invalid_utf8(std::string_view(text.data(), got - text.data()));
          EXPECT_EQ(scan.first_invalid_utf8 == nullptr ? kUtf8Valid : scan.first_invalid_utf8 - text.data(), bad);
          invalid_utf8 += scan.first_invalid_utf8 != nullptr;
        }
      }
    }
    EXPECT_GT(closed, 5000);
    EXPECT_GT(invalid_utf8, 1000);
  });
}

// A UTF-8 sequence, good or bad, may straddle the edge of any 64-byte
// block, and an escape may end just before it: at every offset around the
// first three edges the verdict and the closing quote must be the
// byte-by-byte scan's.
TEST(JsonCheckTest, Utf8SequencesAcrossBlockEdgesMatchTheByteByByteScan) {
  for_each_block_walk([] {
    const std::vector<std::string> sequences = {"\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
                                                "\xE2\x82", "\xF0\x9F\x98", "\xED\xA0\x80",
                                                "\xC0\xAF", "\x80",         "\xFF"};
    const std::vector<std::string> befores = {"", "\\n", "\\\\", "\\u00e9", "\xC3\xA9"};
    int closed = 0, invalid = 0;
    for (std::size_t offset = 0; offset < 200; ++offset) {
      for (const std::string& before : befores) {
        for (const std::string& sequence : sequences) {
          for (const std::string& after : {std::string("b"), std::string("\""), sequence}) {
            const std::string text = std::string(offset, 'a') + before + sequence + after + std::string(70, 'b') + "\"";
            for (bool check_utf8 : {false, true}) {
              expect_same_scan(text, check_utf8, true);
              closed += expect_same_scan(text, check_utf8) != nullptr;
              if (::testing::Test::HasFailure()) return;
            }
            StringScan scan;
            scan_string_contents<true>(text.data(), text.data() + text.size(), scan);
            invalid += scan.first_invalid_utf8 != nullptr;
          }
        }
      }
    }
    EXPECT_GT(closed, 20000);
    EXPECT_GT(invalid, 10000);
  });
}

// Runs of backslashes decide what is escaped by their length's parity, and
// an escape may straddle the edge of a 64-byte block: every run length
// (some filling whole blocks) at every offset around the first two edges
// must give what the byte-by-byte scan gives.
TEST(JsonCheckTest, BackslashRunsAcrossBlockEdgesMatchTheByteByByteScan) {
  for_each_block_walk([] {
    const std::vector<std::string> afters = {"\"", "n", "u00e9", "uD800", "u12", "x", "\xC3\xA9", "\t",   "/",   "t",
                                             "b",  "f", "r",     "v",     "e",   "R", "N",        "\x82", "\xF4"};
    int closed = 0;
    for (std::size_t offset = 0; offset < 140; ++offset) {
      for (std::size_t run = 1; run <= 140; run += (run < 70 ? 1 : 7)) {
        for (const std::string& after : afters) {
          std::string text = std::string(offset, 'a') + std::string(run, '\\') + after + std::string(70, 'b') + "\"";
          for (bool check_utf8 : {false, true}) {
            closed += expect_same_scan(text, check_utf8) != nullptr;
            if (::testing::Test::HasFailure()) return;
          }
        }
      }
    }
    EXPECT_GT(closed, 10000);
  });
}

// The check that also records long values finds exactly the ones
// LongValues::index finds in a separate pass: string keys and values,
// objects and arrays, nested, escaped, just under and just over the
// threshold, after leading bytes.
TEST(JsonCheckTest, CollectsTheLongValuesIndexFinds) {
  std::mt19937 rng(11);
  auto str = [&](std::size_t n) {
    std::string s;
    for (std::size_t i = 0; i < n; ++i) s += (rng() % 17 == 0) ? std::string("\\\"") : std::string(1, 'a' + rng() % 26);
    return "\"" + s + "\"";
  };
  // Whitespace between tokens now and then (never inside strings): the
  // containers holding it, directly or in a nested value, are not compact.
  auto ws = [&] { return rng() % 9 == 0 ? std::string(rng() % 2 ? " " : "\n ") : std::string(); };
  int with_long = 0, with_loose = 0, with_compact = 0;
  for (int round = 0; round < 300; ++round) {
    std::string text = round % 2 ? "[" : "{\"entries\":[";
    for (int e = 0, n = 1 + static_cast<int>(rng() % 6); e < n; ++e) {
      if (e) text += "," + ws();
      const std::size_t k = LongValues::kMinLength - 3 + rng() % 8;  // around the threshold
      text += "{" + str(rng() % 2 ? 3 : k) + ":" + ws() + str(k) + "," + ws() + "\"n\":[" + str(rng() % 600) + ",1," +
              ws() + "null,{\"x\":" + str(k + rng() % 4) + ws() + "}]}";
    }
    text += round % 2 ? "]" : "]}";
    const std::string padded = "\xEF\xBB\xBF \n" + text;  // a BOM and whitespace before the value
    LongValues separate, fused;
    separate.index(padded);
    ASSERT_TRUE(is_certainly_valid_json(std::string_view(padded).substr(3), 64, fused, 3)) << text;
    EXPECT_TRUE(fused == separate) << text;
    if (separate.size() > 0) ++with_long;
    // The whole text is compact exactly when it has no whitespace outside strings.
    const std::size_t root = padded.find_first_of("[{");
    if (fused.container_end_of(root) != 0) {
      const bool has_ws = text.find(" ") != std::string::npos || text.find("\n") != std::string::npos;
      EXPECT_EQ(fused.container_is_compact(root), !has_ws) << text;
      ++(has_ws ? with_loose : with_compact);
    }
  }
  EXPECT_GT(with_long, 100);
  EXPECT_GT(with_loose, 50);
  EXPECT_GT(with_compact, 5);
}

// The check on two threads: wherever the second starts (an entry, a value
// deeper in, inside a string, the first element, an error on either side,
// too deep), the answer, the long values and the elements of the top-level
// object's arrays are those of one thread, and the elements are the
// entries' and the other array's exact spans.
TEST(JsonCheckTest, SecondThreadGivesWhatOneThreadGives) {
  std::mt19937 rng(23);
  auto entry = [&](int i) {
    const char* scalars[] = {"7", "\"s\"", "null", "[]", "-1.5e3", "true"};
    if (rng() % 10 == 0) return std::string(scalars[rng() % 6]);  // not an object: still an element
    std::string e = "{\"id\":" + std::string(rng() % 8 == 0 ? " " : "") + "\"e" + std::to_string(i) +
                    "\",\"data\":{\"list\":[1,{\"k\":\"" + std::string(rng() % 2 ? 300 : 20, 'x') + "\"},[2,3]]";
    if (rng() % 3 == 0) e += ",\"text\":\"a },\\n{ b \\\" c" + std::string(rng() % 400, 'y') + "\"";
    return e + "}}";
  };
  int joins_tried = 0;
  for (int round = 0; round < 300; ++round) {
    const int n = 2 + static_cast<int>(rng() % 30);
    const char* separators[] = {" ,\n  ", ",\n", ","};  // pretty, one per line, compact (tokens may touch)
    const std::string separator = separators[rng() % 3];
    const std::string ws = separator == "," ? "" : "\n";
    std::string doc = "{\"format\":\"thread-export\",\"thread\":{\"id\":\"t\"},\"entries\":[" + ws;
    std::vector<std::size_t> starts;
    std::vector<ElementSpan> expected;
    for (int i = 0; i < n; ++i) {
      if (i) doc += separator;
      starts.push_back(doc.size());
      doc += entry(i);
      expected.push_back({starts.back(), doc.size()});
    }
    doc += ws + "],\"after\":[";
    if (rng() % 2) expected.push_back({doc.size(), doc.size() + 1}), doc += "1";
    doc += "]}" + ws;
    bool spans_moved = false;
    switch (rng() % 6) {  // some documents are broken, on either side
      case 0: doc.insert(starts[rng() % starts.size()] + 1, "x"), spans_moved = true; break;  // "s" stays valid
      case 1: doc.pop_back(), doc.pop_back(); break;
      case 2: doc += "{}"; break;
      default: break;
    }
    const std::size_t depth = rng() % 5 == 0 ? 4 : 64;  // 4: the entries' inner lists are too deep
    std::vector<std::size_t> guesses = {
        starts[rng() % starts.size()], starts[0],       starts.back(), 1 + rng() % (doc.size() - 1),
        doc.find("[2,3]") + 1,         doc.find("\\\"")};
    for (std::size_t at : guesses) {
      if (at == 0 || at >= doc.size()) continue;
      LongValues one, two;
      std::vector<ElementSpan> one_elements, two_elements;
      SecondThread second;
      second.at = at;
      std::size_t reported = 0;
      second.progress = [&](std::size_t, std::size_t offset) { reported = std::max(reported, offset); };
      const bool alone = is_certainly_valid_json(doc, depth, one, 0, {}, SecondThread{}, nullptr, &one_elements);
      ASSERT_EQ(is_certainly_valid_json(doc, depth, two, 0, {}, second, nullptr, &two_elements), alone) << at << "\n"
                                                                                                        << doc;
      if (alone) {
        EXPECT_TRUE(one == two) << at << "\n" << doc;
        auto spans = [](const std::vector<ElementSpan>& v) {
          std::vector<std::pair<std::size_t, std::size_t>> out;
          for (const ElementSpan& e : v) out.emplace_back(e.begin, e.end);
          return out;
        };
        EXPECT_EQ(spans(two_elements), spans(one_elements)) << at << "\n" << doc;
        if (!spans_moved) {
          EXPECT_EQ(spans(one_elements), spans(expected)) << doc;
        }
      }
      joins_tried += std::find(starts.begin() + 1, starts.end(), at) != starts.end();
    }
  }
  EXPECT_GT(joins_tried, 200);
}

}  // namespace
}  // namespace pihydrate
