#include "core/json_check.h"

#include <gtest/gtest.h>

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
  for (const char* text : {"{}", "[]", " {\"a\" : [1, -0, 0.25, true, false, null, \"x\\\"y\\\\z\\n\\u00e9\"]}\n", "\"s\"", "12",
                           "{\"k\":{\"k\":{\"k\":[]}}}", "[\"\\/\\b\\f\\r\\t\"]"})
    EXPECT_TRUE(is_certainly_valid_json(text, 16)) << text;
}

TEST(JsonCheckTest, UnsureOfWhatOnlyRapidJsonDecides) {
  for (const char* text : {"", " ", "{", "[1,]", "{,}", "{\"a\"}", "{\"a\":}", "[01]", "[1.]", "[-]", "[1e5]", "[\"\\ud83d\\ude00\"]",
                           "[\"\\uDC00\"]", "[\"\\x\"]", "[\"\\u12g4\"]", "[\"tab\there\"]", "{} {}", "[tru]", "nul", "[1 2]",
                           "{\"a\":1,}", "[\"unterminated]"})
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

}  // namespace
}  // namespace pihydrate
