// Findings and FindingsList: every finding counted, a hundred of a code listed, the rest summarised.
#include "pihydrate/findings.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

namespace pihydrate {
namespace {

Diagnostic finding(Code code, Severity severity, std::uint64_t line, std::uint64_t column = 1) {
  Diagnostic d;
  d.code = code;
  d.severity = severity;
  d.level = code_info(code).level;
  d.file = "f.jsonl";
  d.line = line;
  d.column = column;
  d.message = "finding at " + std::to_string(line) + ":" + std::to_string(column);
  return d;
}

std::vector<std::uint64_t> lines_of(const Diagnostics& list, Code code) {
  std::vector<std::uint64_t> lines;
  for (const Diagnostic& d : list)
    if (d.code == code && d.unlisted == 0) lines.push_back(d.line);
  return lines;
}

// Whatever order they come in, the hundred kept are the first by position,
// listed in the order they were added; the rest are one summary.
TEST(FindingsTest, KeepsTheFirstHundredByPositionInTheOrderAdded) {
  std::vector<std::uint64_t> order(1000);
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i + 1;
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  Findings findings;
  for (std::uint64_t line : order) findings.add(finding(Code::kMalformedLine, Severity::kWarning, line));
  findings.add(finding(Code::kCrlf, Severity::kWarning, 5));
  const Diagnostics list = findings.take_listed();

  std::vector<std::uint64_t> expected;
  for (std::uint64_t line : order)
    if (line <= kListedPerCode) expected.push_back(line);
  EXPECT_EQ(lines_of(list, Code::kMalformedLine), expected);
  EXPECT_EQ(lines_of(list, Code::kCrlf), std::vector<std::uint64_t>{5});
  ASSERT_EQ(list.size(), kListedPerCode + 2);
  const Diagnostic& summary = list.back();
  EXPECT_EQ(summary.code, Code::kMalformedLine);
  EXPECT_EQ(summary.unlisted, 900u);
  EXPECT_EQ(summary.line, 0u);
  EXPECT_EQ(summary.file, "f.jsonl");
  EXPECT_EQ(summary.severity, Severity::kWarning);
  EXPECT_EQ(summary.message, "900 more PH001 findings like the ones above are not listed");
  EXPECT_EQ(findings.warnings(), 1001u);
  EXPECT_EQ(findings.errors(), 0u);
}

// Findings at one position keep the order they were added in.
TEST(FindingsTest, TiesKeepTheOrderAdded) {
  Findings findings;
  for (int i = 0; i < 150; ++i) {
    Diagnostic d = finding(Code::kDanglingParent, Severity::kWarning, 3, 4);
    d.message = std::to_string(i);
    findings.add(std::move(d));
  }
  const Diagnostics list = findings.take_kept();
  ASSERT_EQ(list.size(), kListedPerCode);
  for (std::size_t i = 0; i < list.size(); ++i) EXPECT_EQ(list[i].message, std::to_string(i));
}

// A summary is an error when any finding it stands for is one, so a report
// that lists only warnings of a code still fails on its unlisted errors.
TEST(FindingsTest, ASummaryOfAnUnlistedErrorIsAnError) {
  Findings findings;
  for (std::uint64_t line = 1; line <= kListedPerCode; ++line)
    findings.add(finding(Code::kLineTooLong, Severity::kWarning, line));
  findings.add(finding(Code::kLineTooLong, Severity::kError, 500));
  const Diagnostics list = findings.take_listed();
  ASSERT_EQ(list.size(), kListedPerCode + 1);
  EXPECT_EQ(list.back().severity, Severity::kError);
  EXPECT_EQ(list.back().unlisted, 1u);
  EXPECT_TRUE(findings.limit_hit());
  EXPECT_TRUE(findings.any_error_at(code_info(Code::kLineTooLong).level));
}

// Above the listing level a finding decides the verdicts only.
TEST(FindingsTest, FindingsAboveTheLevelAreNeitherListedNorCounted) {
  Findings findings(Level::kLoad);
  findings.add(finding(Code::kMalformedLine, Severity::kError, 1));  // resume level
  findings.add(finding(Code::kNullLine, Severity::kError, 2));       // load level
  EXPECT_EQ(lines_of(findings.take_kept(), Code::kMalformedLine), std::vector<std::uint64_t>{});
  EXPECT_EQ(findings.errors(), 1u);
  EXPECT_TRUE(findings.any_error_at(Level::kResume));
  EXPECT_TRUE(findings.any_error_at(Level::kLoad));
}

// Lists gathered apart (a reader's, a rule's) fold into one: their
// summaries add up, and doing it again changes nothing.
TEST(FindingsTest, ListingTwiceChangesNothingAndSummariesAddUp) {
  Diagnostics list;
  for (std::uint64_t line = 1; line <= 130; ++line)
    list.push_back(finding(Code::kEventSkipped, Severity::kWarning, line));
  list.push_back(unlisted_summary(Code::kEventSkipped, Severity::kWarning, "f.jsonl", 1000));
  list_at_most_per_code(list);
  ASSERT_EQ(list.size(), kListedPerCode + 1);
  EXPECT_EQ(list.back().unlisted, 1030u);
  const Diagnostics once = list;
  list_at_most_per_code(list);
  ASSERT_EQ(list.size(), once.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    EXPECT_EQ(list[i].line, once[i].line);
    EXPECT_EQ(list[i].message, once[i].message);
    EXPECT_EQ(list[i].unlisted, once[i].unlisted);
  }
}

// A reader's list: every error added as it comes, warnings up to the cap,
// then one summary.
TEST(FindingsListTest, AddsEveryErrorAndAHundredWarningsOfACode) {
  Diagnostics list;
  FindingsList listed(list);
  for (std::uint64_t line = 1; line <= 250; ++line) {
    listed.add(finding(Code::kEventSkipped, Severity::kWarning, line));
    listed.add(finding(Code::kEventCaptureInvalid, Severity::kError, line));
  }
  EXPECT_EQ(lines_of(list, Code::kEventSkipped).size(), kListedPerCode);
  EXPECT_EQ(lines_of(list, Code::kEventCaptureInvalid).size(), 250u) << "errors are never held back";
  listed.close();
  ASSERT_EQ(list.back().code, Code::kEventSkipped);
  EXPECT_EQ(list.back().unlisted, 150u);
  EXPECT_EQ(list.back().severity, Severity::kWarning);
  const std::size_t size = list.size();
  listed.close();
  EXPECT_EQ(list.size(), size) << "a second close adds no summary";
}

}  // namespace
}  // namespace pihydrate
