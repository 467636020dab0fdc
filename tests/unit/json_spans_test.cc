#include "core/json_spans.h"

#include <gtest/gtest.h>

namespace pihydrate {
namespace {

TEST(JsonSpans, MembersWithNestedValuesAndEscapes) {
  std::string s = R"({"a":1.10, "b" : {"x":[1,"]"]},"c\"d":"e\\\"f","n":null})";
  auto m = object_members(s, 0);
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m[0].key, "a");
  EXPECT_EQ(s.substr(m[0].value_begin, m[0].value_end - m[0].value_begin), "1.10");
  EXPECT_EQ(s.substr(m[1].value_begin, m[1].value_end - m[1].value_begin), R"({"x":[1,"]"]})");
  EXPECT_EQ(m[2].key, "c\"d");
  EXPECT_EQ(json_string_value(s, m[2].value_begin), "e\\\"f");
  EXPECT_EQ(s.substr(m[3].value_begin, 4), "null");
}

TEST(JsonSpans, EditsKeepEveryOtherByte) {
  std::string s = R"({"type":"message","id":"x","n":1E+2,"u":"\u00e9"})";
  auto m = object_members(s, 0);
  ByteEdits edits;
  edits.replace(find_member(m, "id")->value_begin, find_member(m, "id")->value_end, "\"a1b2c3d4\"");
  edits.insert(find_member(m, "id")->value_end, ",\"parentId\":null");
  EXPECT_EQ(edits.apply(s), R"({"type":"message","id":"a1b2c3d4","parentId":null,"n":1E+2,"u":"\u00e9"})");
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
}

}  // namespace
}  // namespace pihydrate
