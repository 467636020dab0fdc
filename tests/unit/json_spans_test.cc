// JSON spans: members, elements, byte edits and quoting by offset.
#include "core/json_spans.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace pihydrate {
namespace {

TEST(JsonSpans, MembersWithNestedValuesAndEscapes) {
  std::string s = R"({"a":1.10, "b" : {"x":[1,"]"]},"c\"d":"e\\\"f","n":null})";
  auto m = object_members(s, 0);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].key(), "a");
  EXPECT_EQ(s.substr(m[0].value_begin, m[0].value_end - m[0].value_begin), "1.10");
  EXPECT_EQ(s.substr(m[1].value_begin, m[1].value_end - m[1].value_begin), R"({"x":[1,"]"]})");
  EXPECT_EQ(m[2].key(), "c\"d");
  EXPECT_EQ(json_string_value(s, m[2].value_begin), "e\\\"f");
  EXPECT_EQ(s.substr(m[3].value_begin, 4), "null");
}

// Walking objects into one reused vector gives each object's own members:
// none left over from a bigger object before, keys rewritten in place.
TEST(JsonSpans, MembersIntoAReusedVectorAreEachObjectsOwn) {
  const std::string objects[] = {
      R"({"a":1.10, "b" : {"x":[1,"]"]},"a key longer than sixteen bytes":"e\\\"f","n":null})",
      R"({"z":"short"})",
      R"({})",
      R"({"an escape past the first sixteen bytes: \"q\"":1,"\u0041 first":2,"tail":3})",
      R"({"c\"d":[],"a key longer than sixteen bytes, again":{"q":1},"m":true})",
  };
  std::vector<MemberSpan> reused;
  for (const std::string& s : objects) {
    object_members(s, 0, nullptr, reused);
    const std::vector<MemberSpan> fresh = object_members(s, 0);
    ASSERT_EQ(reused.size(), fresh.size()) << s;
    for (std::size_t k = 0; k < fresh.size(); ++k) {
      EXPECT_EQ(reused[k].key(), fresh[k].key()) << s;
      EXPECT_EQ(reused[k].begin, fresh[k].begin) << s;
      EXPECT_EQ(reused[k].value_begin, fresh[k].value_begin) << s;
      EXPECT_EQ(reused[k].value_end, fresh[k].value_end) << s;
    }
  }
  EXPECT_EQ(reused.size(), 3u);
  EXPECT_EQ(reused[0].key(), "c\"d");
  const std::vector<MemberSpan> escaped = object_members(objects[3], 0);
  ASSERT_EQ(escaped.size(), 3u);
  EXPECT_EQ(escaped[0].key(), "an escape past the first sixteen bytes: \"q\"");
  EXPECT_EQ(escaped[1].key(), "A first");
  EXPECT_EQ(escaped[2].key(), "tail");
}

TEST(JsonSpans, EditsKeepEveryOtherByte) {
  std::string s = R"({"type":"message","id":"x","n":1E+2,"u":"\u00e9"})";
  auto m = object_members(s, 0);
  ByteEdits edits;
  edits.replace(find_member(m, "id")->value_begin, find_member(m, "id")->value_end, "\"a1b2c3d4\"");
  edits.insert(find_member(m, "id")->value_end, ",\"parentId\":null");
  EXPECT_EQ(edits.apply(s), R"({"type":"message","id":"a1b2c3d4","parentId":null,"n":1E+2,"u":"\u00e9"})");
}

// ByteEdits sorts a few edits by insertion and many with stable_sort: both
// must apply edits as the plain rule says (by where they begin, those at one
// place in the order they were made; one overlapping an earlier is left out).
TEST(JsonSpans, EditsApplyByThePlainRuleWhateverTheirNumber) {
  std::mt19937 rng(17);
  for (int round = 0; round < 3000; ++round) {
    const std::string s(static_cast<std::size_t>(rng() % 40), 'a');
    struct Made {
      std::size_t begin, end;
      std::string text;
    };
    std::vector<Made> made;
    ByteEdits edits;
    const std::size_t count = round % 40;  // below, at and past the 16 sorted by insertion
    for (std::size_t k = 0; k < count; ++k) {
      const std::size_t begin = rng() % (s.size() + 1), end = begin + rng() % (s.size() + 1 - begin);
      made.push_back({begin, end, std::to_string(k) + "|"});
      edits.replace(begin, end, made.back().text);
    }
    std::vector<std::size_t> order(made.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return made[a].begin < made[b].begin; });
    std::string expected;
    std::size_t pos = 0;
    for (const std::size_t k : order) {
      if (made[k].begin < pos) continue;
      expected += s.substr(pos, made[k].begin - pos) + made[k].text;
      pos = made[k].end;
    }
    expected += s.substr(pos);
    ASSERT_EQ(edits.apply(s), expected) << "round " << round;
  }
}

TEST(JsonSpans, RemoveMemberTakesOneComma) {
  std::string s = R"({"a":1,"b":2,"c":3})";
  auto m = object_members(s, 0);
  ByteEdits first, middle, last;
  first.remove_member(s, m[0]);
  middle.remove_member(s, m[1]);
  last.remove_member(s, m[2]);
  EXPECT_EQ(first.apply(s), R"({"b":2,"c":3})");
  EXPECT_EQ(middle.apply(s), R"({"a":1,"c":3})");
  EXPECT_EQ(last.apply(s), R"({"a":1,"b":2})");
}

TEST(JsonSpans, ArrayElements) {
  std::string s = R"([ {"t":"a"} , "x,y", 3 ])";
  auto e = array_elements(s, 0);
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(s.substr(e[1].begin, e[1].end - e[1].begin), "\"x,y\"");
  EXPECT_EQ(s.substr(e[2].begin, e[2].end - e[2].begin), "3");
}

TEST(JsonSpans, QuoteAndUnescapeRoundTrip) {
  std::string text = "line\n\t\"q\" \\ \x01 é 😀";
  std::string quoted = json_quote(text);
  EXPECT_EQ(json_string_value(quoted, 0), text);
  EXPECT_EQ(json_string_value(R"("\ud83d\ude00")", 0), "😀");
  // The exact bytes: the short escapes, \u00XX for the other control bytes,
  // everything else (DEL, UTF-8) as it is, at either end of a run.
  EXPECT_EQ(json_quote(std::string("\"a\\b\n\r\t\b\f\x01\x1f\x7f é\0z", 17)), R"("\"a\\b\n\r\t\b\f\u0001\u001f)"
                                                                              "\x7f"
                                                                              R"( é\u0000z")");
  EXPECT_EQ(json_quote(""), "\"\"");
  EXPECT_EQ(json_quote("plain"), "\"plain\"");
}

}  // namespace
}  // namespace pihydrate

namespace pihydrate {
namespace {

TEST(JsonSpans, BlankStringsAreWhatJavaScriptsTrimEmpties) {
  for (const char* blank : {"", " ", "\\n\\t\\r\\f ", "\\u00a0\\u2028\\uFEFF", "\xC2\xA0\xE3\x80\x80", "\\u000b"})
    EXPECT_TRUE(json_string_is_blank(blank)) << blank;
  for (const char* text : {"a", " a", "\\n\\u0041", "\\b", "\\\"", "\\/", "\xC3\xA9", "\\u200b", "\\ud83d\\ude00"})
    EXPECT_FALSE(json_string_is_blank(text)) << text;
}

TEST(CompactJsonTest, DropsWhitespaceOutsideStringsOnly) {
  EXPECT_EQ(compact_json("{\n  \"a b\": [1, 2],\r\n\t\"c\" : \"x \\\" y\\\\\" }"),
            "{\"a b\":[1,2],\"c\":\"x \\\" y\\\\\"}");
  EXPECT_EQ(compact_json("{\"k\":\"ends with a backslash \\\\\"}"), "{\"k\":\"ends with a backslash \\\\\"}");
  EXPECT_EQ(compact_json("[ \"unterminated  string"), "[\"unterminated  string");
  EXPECT_EQ(compact_json(""), "");
  std::string out = "x";
  append_compact_json(out, " { } ");
  EXPECT_EQ(out, "x{}");
}

// Walking a document with its long strings indexed gives the same spans as
// scanning them, escaped quotes and backslashes included.
TEST(LongValuesTest, KnownEndsGiveTheSameSpans) {
  std::string big(2 * LongValues::kMinLength, 'a');
  for (std::size_t i = 0; i < big.size(); i += 50) big.replace(i, 4, "\\\\\\\"");  // \\\" : a backslash, a quote
  const std::string doc =
      "{\"short\":\"s\",\"big\":\"" + big + "\",\"list\":[\"" + big + "\",{\"k\":\"" + big + "\"}],\"n\":1}";
  LongValues known;
  known.index(doc);
  const auto plain = object_members(doc, 0);
  const auto indexed = object_members(doc, 0, &known);
  ASSERT_EQ(plain.size(), 4u);
  ASSERT_EQ(indexed.size(), plain.size());
  for (std::size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(indexed[i].key(), plain[i].key());
    EXPECT_EQ(indexed[i].value_begin, plain[i].value_begin);
    EXPECT_EQ(indexed[i].value_end, plain[i].value_end);
  }
  EXPECT_EQ(known.string_end_of(plain[1].value_begin), plain[1].value_end);
  EXPECT_EQ(known.string_end_of(plain[0].value_begin), 0u);  // short strings are not indexed
  EXPECT_EQ(array_elements(doc, plain[2].value_begin, &known).size(), 2u);
  // Containers longer than the threshold are indexed too: the list, the
  // object in it and the document itself, each ending where a scan ends.
  EXPECT_EQ(known.container_end_of(plain[2].value_begin), plain[2].value_end);
  EXPECT_EQ(known.container_end_of(0), doc.size());
  EXPECT_EQ(json_value_end(doc, 0, &known), doc.size());
  EXPECT_EQ(known.container_end_of(doc.find("{\"k\"")), json_value_end(doc, doc.find("{\"k\"")));
}

// Lookups start where the last one ended and gallop from there: in any
// order (forward, back, far, near, absent), each must give what a plain
// search of the spans gives.
TEST(LongValuesTest, LookupsInAnyOrderFindWhatASearchFinds) {
  std::mt19937 rng(11);
  std::string doc = "[";
  std::vector<std::size_t> starts;
  for (int i = 0; i < 3000; ++i) {
    if (i) doc += ",";
    if (rng() % 3 == 0) {
      doc += "1";  // a short value between the long ones
    } else {
      starts.push_back(doc.size());
      doc += "\"" + std::string(LongValues::kMinLength + rng() % 40, 'a') + "\"";
    }
  }
  doc += "]";
  LongValues known;
  known.index(doc);
  std::vector<std::size_t> queries;
  for (std::size_t at : starts) queries.push_back(at);                         // front to back
  for (std::size_t i = starts.size(); i-- > 0;) queries.push_back(starts[i]);  // back to front
  for (int i = 0; i < 20000; ++i) {
    const std::size_t at = starts[rng() % starts.size()];
    queries.push_back(rng() % 4 == 0 ? at + 1 : at);                              // sometimes not a value's start
    if (rng() % 2) queries.push_back(starts[(rng() % starts.size()) / 64 * 64]);  // a far jump
  }
  queries.push_back(0);
  queries.push_back(doc.size() + 10);
  for (std::size_t at : queries) {
    const bool is_start = std::binary_search(starts.begin(), starts.end(), at);
    const std::size_t expected = is_start ? json_value_end(doc, at) : 0;
    ASSERT_EQ(known.string_end_of(at), expected) << at;
  }
}

// Containers close after what they hold, and are put in order as they are
// added: whether they hold a few long containers, more than the few that
// are moved (an array of a hundred), or sit seventy deep, every one is
// found, and ends where a scan ends.
TEST(LongValuesTest, ContainersHoldingManyOrDeepOnesAreAllFound) {
  const std::string long_string = "\"" + std::string(LongValues::kMinLength, 'x') + "\"";
  std::string doc = "{\"wide\":[";
  for (int i = 0; i < 100; ++i) doc += std::string(i ? "," : "") + "{\"k\":" + long_string + "}";
  doc += "],\"deep\":";
  for (int i = 0; i < 70; ++i) doc += "[" + long_string + ",";
  doc += "1";
  for (int i = 0; i < 70; ++i) doc += "]";
  doc += ",\"loose\": [ {\"a\" : " + long_string + " } ]}";
  LongValues known;
  known.index(doc);
  std::vector<std::size_t> containers;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    if (doc[i] == '"')
      i = json_value_end(doc, i) - 1;  // strings hold no container
    else if (doc[i] == '{' || doc[i] == '[')
      containers.push_back(i);
  }
  ASSERT_EQ(containers.size(), 1u + 1 + 100 + 70 + 2);
  for (std::size_t at : containers) {
    const std::size_t end = json_value_end(doc, at);
    if (end - at > LongValues::kMinLength)
      ASSERT_EQ(known.container_end_of(at), end) << at;
    else
      ASSERT_EQ(known.container_end_of(at), 0u) << at;
  }
  EXPECT_FALSE(known.container_is_compact(0));
  EXPECT_TRUE(known.container_is_compact(doc.find("[{")));
  EXPECT_FALSE(known.container_is_compact(doc.find("[ {")));
}

// A copy (a second reader's) shares the spans and has hints of its own;
// changing either side must not show in the other.
TEST(LongValuesTest, CopiesShareSpansUntilOneChanges) {
  const std::string long_string = "\"" + std::string(LongValues::kMinLength + 10, 'x') + "\"";
  const std::string doc = "[" + long_string + "," + long_string + "]";
  LongValues original;
  original.index(doc);
  LongValues copy = original;
  ASSERT_TRUE(copy == original);
  // Lookups through the copy move only its own hint.
  EXPECT_EQ(copy.string_end_of(1 + long_string.size() + 1), doc.size() - 1);
  EXPECT_EQ(original.string_end_of(1), 1 + long_string.size());
  EXPECT_EQ(copy.string_end_of(1), 1 + long_string.size());
  // Changing the copy leaves the original's spans alone, and the other way round.
  copy.add_string(doc.size() + 100, doc.size() + 500);
  EXPECT_EQ(original.string_end_of(doc.size() + 100), 0u);
  EXPECT_EQ(copy.string_end_of(doc.size() + 100), doc.size() + 500);
  EXPECT_EQ(original.size(), 3u);  // two strings and the array
  EXPECT_EQ(copy.size(), 4u);
  LongValues second = original;
  original.clear();
  EXPECT_EQ(original.size(), 0u);
  EXPECT_EQ(second.size(), 3u);
  EXPECT_EQ(second.container_end_of(0), doc.size());
}

// Containers come in closing order, or (a two-thread check) as sorted
// halves followed by the few closed last. Either way finish() must leave
// them as a full sort would, whether the unsorted tail is short (merged in)
// or long (sorted whole).
TEST(LongValuesTest, ContainersEndSortedFromAnyOrder) {
  std::mt19937 rng(5);
  for (int round = 0; round < 200; ++round) {
    std::vector<std::pair<std::size_t, std::size_t>> spans;
    const std::size_t n = 1 + rng() % 400;
    for (std::size_t i = 0; i < n; ++i) spans.push_back({i * 1000 + 10, i * 1000 + 300});
    std::shuffle(spans.begin(), spans.end(), rng);
    const std::size_t sorted_prefix = round % 2 ? n - std::min<std::size_t>(n, rng() % 8) : rng() % (n + 1);
    std::sort(spans.begin(), spans.begin() + static_cast<std::ptrdiff_t>(sorted_prefix));
    LongValues given, reference;
    for (const auto& [begin, end] : spans) given.add_container(begin, end, begin % 3000 == 10);
    if (round % 3 == 0) given.sort_containers();  // the halves' own sort, then more
    std::sort(spans.begin(), spans.end());
    for (const auto& [begin, end] : spans) reference.add_container(begin, end, begin % 3000 == 10);
    given.finish();
    reference.finish();
    ASSERT_TRUE(given == reference) << round;
    for (const auto& [begin, end] : spans) {
      ASSERT_EQ(given.container_end_of(begin), end);
      ASSERT_EQ(given.container_is_compact(begin), begin % 3000 != 10);
    }
  }
}

// Keys and values are copied a run at a time between escapes: every escape,
// at the start, the end and next to each other, must still be decoded.
TEST(JsonSpans, StringValuesDecodeEscapesBetweenRuns) {
  EXPECT_EQ(json_string_value(R"("\"start")", 0), "\"start");
  EXPECT_EQ(json_string_value(R"("end\\")", 0), "end\\");
  EXPECT_EQ(json_string_value(R"("\n\t\r\b\f\/\\\"")", 0), "\n\t\r\b\f/\\\"");
  EXPECT_EQ(json_string_value(R"("a\u00e9b\ud83d\ude00c\ud800d")", 0),
            "a\xC3\xA9"
            "b\xF0\x9F\x98\x80"
            "c\xEF\xBF\xBD"
            "d");
  EXPECT_EQ(json_string_value(R"("")", 0), "");
  EXPECT_EQ(json_string_value(R"("plain text, no escape")", 0), "plain text, no escape");
  const auto members = object_members(R"({"k\"ey":1,"\u0069d":2})", 0);
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[0].key(), "k\"ey");
  EXPECT_EQ(members[1].key(), "id");
}

// Containers are walked from one '"', '{', '}', '[' or ']' to the next:
// random nested values, with brackets and braces inside strings, escaped
// quotes, numbers and literals between them, must end where they were
// built to end, and every object's members must be the ones it was built of.
TEST(JsonSpans, ContainerEndsAndMembersAreWhereTheyWereBuilt) {
  std::mt19937 rng(17);
  struct Built {
    std::size_t begin, end;
    std::vector<std::pair<std::string, std::size_t>> keys;  // an object's keys (unescaped) and value starts
  };
  std::vector<Built> built;
  std::string text;
  const std::vector<std::string> strings = {
      "\"\"", "\"a\"", "\"[{\"", "\"}]\"", "\"x\\\"]\"", "\"\\\\\"", "\"" + std::string(40, '{') + "\""};
  std::function<void(int)> value = [&](int depth) {
    const unsigned pick = depth > 5 ? rng() % 4 : rng() % 6;
    if (pick == 0)
      text += strings[rng() % strings.size()];
    else if (pick == 1)
      text += std::to_string(static_cast<int>(rng() % 100000) - 50000);
    else if (pick == 2)
      text += rng() % 2 ? "true" : "null";
    else if (pick == 3)
      text += "-1.5e+3";
    else {
      const bool object = pick == 4;
      const std::size_t at = built.size();
      built.push_back({text.size(), 0, {}});
      text += object ? '{' : '[';
      for (int i = 0, n = static_cast<int>(rng() % 5); i < n; ++i) {
        if (i) text += rng() % 3 ? "," : " , ";
        if (object) {
          const std::string key = rng() % 4 ? "k" + std::to_string(i) : "k\\\"" + std::to_string(i);
          text += "\"" + key + "\":";
          if (rng() % 3 == 0) text += " ";
          std::string unescaped = key;
          if (const std::size_t slash = unescaped.find('\\'); slash != std::string::npos) unescaped.erase(slash, 1);
          built[at].keys.push_back({unescaped, text.size()});
        }
        value(depth + 1);
      }
      text += object ? '}' : ']';
      built[at].end = text.size();
    }
  };
  for (int round = 0; round < 3000; ++round) {
    text.clear();
    built.clear();
    text += "{";
    built.push_back({0, 0, {}});
    for (int i = 0; i < 3; ++i) {
      if (i) text += ",";
      text += "\"m" + std::to_string(i) + "\":";
      built[0].keys.push_back({"m" + std::to_string(i), text.size()});
      value(0);
    }
    text += "}";
    built[0].end = text.size();
    for (const Built& b : built) {
      ASSERT_EQ(json_value_end(text, b.begin), b.end) << text << " at " << b.begin;
      if (text[b.begin] != '{') continue;
      const std::vector<MemberSpan> members = object_members(text, b.begin);
      ASSERT_EQ(members.size(), b.keys.size()) << text;
      for (std::size_t k = 0; k < members.size(); ++k) {
        EXPECT_EQ(members[k].key(), b.keys[k].first) << text;
        EXPECT_EQ(members[k].value_begin, b.keys[k].second) << text;
      }
    }
  }
}

// The first member of a name, found by a walk that stops there: the first
// of duplicates (find_member gives the last), escaped keys, a long value
// stepped over, none at all.
TEST(JsonSpans, FirstMemberValueStopsAtTheFirstOfItsName) {
  const std::string big = "\"" + std::string(2 * LongValues::kMinLength, 'x') + "\"";
  const std::string doc = "{\"a\":1, \"big\":" + big + ",\"b\":{\"b\":2},\"\\u0062\":3,\"b\":4}";
  LongValues known;
  known.index(doc);
  const LongValues* const walks[] = {nullptr, &known};
  for (const LongValues* k : walks) {
    const auto [begin, end] = first_member_value(doc, 0, "b", k);
    EXPECT_EQ(doc.substr(begin, end - begin), "{\"b\":2}");
    const auto [big_begin, big_end] = first_member_value(doc, 0, "big", k);
    EXPECT_EQ(doc.substr(big_begin, big_end - big_begin), big);
    EXPECT_EQ(first_member_value(doc, 0, "missing", k), (std::pair<std::size_t, std::size_t>{0, 0}));
  }
  const std::vector<MemberSpan> members = object_members(doc, 0);
  const MemberSpan* last = find_member(members, "b");
  ASSERT_NE(last, nullptr);
  EXPECT_EQ(doc.substr(last->value_begin, last->value_end - last->value_begin), "4");
}

// A string's end, found one byte at a time: what the 64-byte scan must give
// wherever blocks, backslash runs and the 256-byte head boundary fall.
TEST(JsonSpans, StringEndMatchesTheByteByByteScan) {
  std::mt19937 rng(5);
  const std::string alphabet = "\\\\\\\"ab";  // mostly backslashes, some quotes
  int ended = 0;
  for (int round = 0; round < 20000; ++round) {
    std::string text = "\"";
    const std::size_t length = rng() % 700;
    if (rng() % 2) {
      for (std::size_t i = 0; i < length; ++i) text += alphabet[rng() % alphabet.size()];
    } else {
      // Whole escapes only: the string runs to its end, through every block.
      const char* tokens[] = {"x", "xxxxxxx", "\\\"", "\\\\"};
      while (text.size() < length) text += tokens[rng() % 4];
    }
    text += "x\"";  // so every string ends (the x may be escaped, the quote not)
    std::size_t expected = 0;
    for (std::size_t i = 1, escaped = 0; i < text.size(); ++i) {
      if (escaped)
        escaped = 0;
      else if (text[i] == '\\')
        escaped = 1;
      else if (text[i] == '"') {
        expected = i + 1;
        break;
      }
    }
    ASSERT_NE(expected, 0u);
    ASSERT_EQ(json_value_end(text, 0), expected) << text;
    ended += expected > 300;
  }
  EXPECT_GT(ended, 100);  // strings past the head and several blocks were seen
}

}  // namespace
}  // namespace pihydrate
