// Every code in the table is documented, and codes are unique and ordered.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "pihydrate/diagnostic.h"

namespace pihydrate {
namespace {

TEST(DiagnosticCodes, AreUniqueAndOrdered) {
  const auto& codes = all_codes();
  for (std::size_t i = 1; i < codes.size(); ++i)
    EXPECT_LT(static_cast<int>(codes[i - 1].code), static_cast<int>(codes[i].code)) << code_name(codes[i].code);
}

TEST(DiagnosticCodes, EachHasASectionInDocs) {
  std::ifstream in(std::string(PIHYDRATE_SOURCE_DIR) + "/docs/diagnostics.md");
  ASSERT_TRUE(in) << "docs/diagnostics.md is missing";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string docs = ss.str();
  for (const CodeInfo& c : all_codes()) {
    std::string heading = "## " + code_name(c.code) + " " + c.slug;
    EXPECT_NE(docs.find(heading), std::string::npos) << "missing heading: " << heading;
  }
}

TEST(DiagnosticCodes, NameIsPHAndThreeDigits) {
  EXPECT_EQ(code_name(Code::kMalformedLine), "PH001");
  EXPECT_EQ(code_name(Code::kCwdMissing), "PH103");
}

}  // namespace
}  // namespace pihydrate
