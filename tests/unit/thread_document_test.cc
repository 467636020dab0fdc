// ThreadDocument: string texts, positions from the one-pass check, and the second thread's page releases.
#include "pihydrate/hydrate.h"

#include <unistd.h>

#include <algorithm>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <set>

#include "common/index_summary.h"
#include "common/recording_residency.h"
#include "core/json_spans.h"
#include "core/mapped_file.h"
#include "hydrate/plan.h"
#include "pihydrate/errors.h"
#include "pihydrate/output_file.h"
#include "pihydrate/spool.h"
#include "pihydrate/validator.h"
#include "readers/page_window.h"
#include "readers/thread_document.h"
#include "readers/thread_export.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/stat.h>

#include <atomic>
#include <sstream>

namespace pihydrate {
namespace {

using test_support::RecordingResidency;

// A string's text without a copy: the document's own bytes when it has no
// escape, else unescaped into the scratch string; nothing for a non-string.
TEST(ThreadDocumentTest, StringTextIsTheStringValueCopiedOnlyWhenEscaped) {
  std::string text = R"({"plain":"pi.chunk","escaped":"a\"b\u00e9\n","empty":"","number":12,"object":{"k":"v"}})";
  ThreadDocument doc;
  ASSERT_TRUE(doc.parse_plain(text, 64));
  std::string scratch;
  for (const MemberSpan& m : doc.members(doc.root())) {
    const JsonRef value{m.value_begin, m.value_end};
    const std::string_view got = doc.string_text(value, scratch);
    EXPECT_EQ(std::string(got), doc.string_value(value)) << m.key();
    const bool in_document = got.data() >= doc.bytes().data() && got.data() < doc.bytes().data() + doc.bytes().size();
    if (m.key() == "plain") {
      EXPECT_TRUE(in_document);
    }
    if (m.key() == "escaped") {
      EXPECT_EQ(got, "a\"b\xC3\xA9\n");
      EXPECT_EQ(got.data(), scratch.data());
    }
    if (m.key() == "number" || m.key() == "object") {
      EXPECT_TRUE(got.empty());
    }
  }
  EXPECT_TRUE(doc.string_text(JsonRef{}, scratch).empty());
}

// The quick path records line starts during its syntax check instead of a
// pass of its own: every position it gives must be the full path's, BOM,
// CRLF, blank lines and a big document split over two threads included.
TEST(ThreadDocumentTest, OnePassPositionsAreTheFullParsesPositions) {
  std::string big = "{\"format\":\"thread-export\",\"version\":1,\"thread\":{\"id\":\"t\"},\"entries\":[\n";
  for (int i = 0; big.size() < ThreadDocument::kSecondThreadBytes + 4096; ++i)
    big += std::string(i ? ",\n" : "") + "{\"id\":\"e" + std::to_string(i) +
           "\",\"kind\":\"chat\",\"role\":\"user\",\"text\":\"" + std::string(200 + i % 300, 'x') + "\"}";
  big += "\r\n]}\n\n";
  const std::vector<std::string> documents = {
      "{\"a\":1}",
      "\xEF\xBB\xBF\n\n  {\"a\":\n[1,\r\n2]}\n",
      "\n{\n  \"a\": \"x\\ny\",\n  \"b\": [\n    {}\n  ]\n}\n\n\n",
      "{\"t\":{\"x\":[1,[2]]},\"e\":[ 1 , \"s\",[[]],{\"y\":[3]} ],\"f\":[]}",
      big,
  };
  for (const std::string& text : documents) {
    std::string one_pass_bytes = text, full_bytes = text;
    ThreadDocument one_pass, full;
    ASSERT_TRUE(one_pass.parse_plain(one_pass_bytes, 64)) << text.substr(0, 80);
    ASSERT_TRUE(full.parse(full_bytes, 64)) << text.substr(0, 80);
    EXPECT_EQ(one_pass.root().begin, full.root().begin);
    EXPECT_EQ(one_pass.root().end, full.root().end);
    // The arrays' elements the syntax check recorded are those a walk finds,
    // for the top-level object's arrays and (walked) for the others.
    auto spans = [](const std::vector<JsonRef>& refs) {
      std::vector<std::pair<std::size_t, std::size_t>> out;
      for (const JsonRef& r : refs) out.emplace_back(r.begin, r.end);
      return out;
    };
    std::vector<JsonRef> arrays;
    for (const MemberSpan& m : full.members(full.root())) {
      const JsonRef value{m.value_begin, m.value_end};
      if (full.kind(value) == RefKind::kArray) arrays.push_back(value);
      for (const MemberSpan& inner : full.members(value))
        if (full.kind({inner.value_begin, inner.value_end}) == RefKind::kArray)
          arrays.push_back({inner.value_begin, inner.value_end});
    }
    for (const JsonRef& array : arrays) {
      std::string fresh_bytes = text;  // what the check found is handed over once: a fresh parse for each array
      ThreadDocument fresh;
      ASSERT_TRUE(fresh.parse_plain(fresh_bytes, 64));
      EXPECT_EQ(spans(fresh.top_array_elements(array)), spans(full.elements(array))) << text.substr(array.begin, 40);
      EXPECT_EQ(spans(fresh.top_array_elements(array)), spans(full.elements(array))) << "the second time, walked";
      EXPECT_EQ(spans(full.top_array_elements(array)), spans(full.elements(array)));
    }
    const std::size_t step = text.size() > 100000 ? 97 : 1;
    for (std::size_t at = 0; at < text.size(); at += step) {
      std::uint64_t line1 = 0, column1 = 0, line2 = 0, column2 = 0;
      one_pass.position(at, line1, column1);
      full.position(at, line2, column2);
      ASSERT_EQ(line1, line2) << at;
      ASSERT_EQ(column1, column2) << at;
    }
  }
}

// The syntax check's second thread lets the pages it read go a step at a
// time, not at each MiB it reports: every drop interrupts the other core.
// What it read is let go in the end all the same.
TEST(ThreadDocumentTest, TheSecondThreadLetsPagesGoAStepAtATime) {
  std::string text = "{\"format\":\"thread-export\",\"version\":1,\"thread\":{\"id\":\"t\"},\"entries\":[\n";
  for (int i = 0; text.size() < 4 * ThreadDocument::kSecondThreadBytes; ++i)
    text += std::string(i ? ",\n" : "") + "{\"id\":\"e" + std::to_string(i) +
            "\",\"kind\":\"chat\",\"role\":\"user\",\"text\":\"" + std::string(500 + i % 700, 'x') + "\"}";
  text += "]}\n";
  RecordingResidency residency;
  ThreadDocument doc;
  doc.set_residency(&residency);
  ASSERT_TRUE(doc.parse_plain(text, 64));
  ASSERT_GE(residency.ranges.size(), 2u) << "the second thread read several steps";
  const std::size_t begin = residency.ranges.front().first;
  EXPECT_GT(begin, text.size() / 4);
  std::size_t last = begin;
  for (const auto& range : residency.ranges) {
    EXPECT_EQ(range.first, begin);
    EXPECT_GE(range.second, last + PageWindow::kStep) << "a release less than a step after the last";
    last = range.second;
  }
  EXPECT_GT(last, text.size() - PageWindow::kStep - (std::size_t{1} << 20)) << "nearly to the end";
  ASSERT_FALSE(residency.released.empty());
  EXPECT_EQ(residency.released.back(), text.size());  // then everything goes
}

}  // namespace
}  // namespace pihydrate
