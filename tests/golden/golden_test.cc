// Golden tests. Each case is a folder under tests/golden/<group>/<case>/ with
//   cmd       the exact command line, starting with `pi-hydrate`; `< FILE`
//             at the end feeds FILE to standard input
//   input.*   the input file(s) the command names
//   expected  the exit code, stdout and stderr the command must produce
// The command runs in-process (run_cli) with the case folder as the working
// directory. PIHYDRATE_UPDATE_GOLDEN=1 rewrites `expected` instead of
// comparing; review the diff before committing it (docs/testing.md).
// A case whose command reads a file outside the repository (data kept
// beside a checkout) is skipped, saying which, when that file is absent.
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

#include "pihydrate/cli.h"

namespace {

namespace fs = boost::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream in(p.string(), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> discover_cases() {
  std::vector<std::string> cases;
  fs::path root(PIHYDRATE_GOLDEN_DIR);
  for (fs::recursive_directory_iterator it(root), end; it != end; ++it) {
    if (it->path().filename() == "cmd") cases.push_back(fs::relative(it->path().parent_path(), root).string());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

// Splits a command line: whitespace separates words, '...' and "..." quote.
std::vector<std::string> split_command(const std::string& line) {
  std::vector<std::string> words;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (char c : line) {
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        cur += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(cur);
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(cur);
  return words;
}

// The first file the command reads that lies outside the repository and
// does not exist, or "". Option values that name no input (--cwd may name
// a missing directory on purpose) are passed over.
std::string missing_outside_input(const std::vector<std::string>& words, const fs::path& dir) {
  static const std::vector<std::string> kNotInputs = {"--cwd",    "--process-cwd", "-o",
                                                      "--output", "--session-dir", "--agent-dir"};
  const fs::path repo = fs::path(PIHYDRATE_GOLDEN_DIR).parent_path().parent_path().lexically_normal();
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word.find('/') == std::string::npos || word[0] == '-') continue;
    if (i > 0 && std::find(kNotInputs.begin(), kNotInputs.end(), words[i - 1]) != kNotInputs.end()) continue;
    const fs::path path = fs::path(word).is_absolute() ? fs::path(word) : (dir / word).lexically_normal();
    const std::string inside = path.lexically_relative(repo).string();
    const bool outside = inside.empty() || inside == ".." || inside.rfind("../", 0) == 0;
    if (outside && !fs::exists(path)) return path.string();
  }
  return {};
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, MatchesExpected) {
  const fs::path dir = fs::path(PIHYDRATE_GOLDEN_DIR) / GetParam();
  std::vector<std::string> words = split_command(read_file(dir / "cmd"));
  ASSERT_FALSE(words.empty());
  ASSERT_EQ(words[0], "pi-hydrate") << "cmd must start with pi-hydrate";
  words.erase(words.begin());
  if (const std::string missing = missing_outside_input(words, dir); !missing.empty())
    GTEST_SKIP() << "needs " << missing << ", outside the repository, which is not there";
  std::string stdin_bytes;
  if (words.size() >= 2 && words[words.size() - 2] == "<") {
    stdin_bytes = read_file(dir / words.back());
    words.resize(words.size() - 2);
  }

  const fs::path old_cwd = fs::current_path();
  fs::current_path(dir);
  std::istringstream in(stdin_bytes);
  std::ostringstream out, err;
  int code = pihydrate::run_cli(words, in, out, err);
  fs::current_path(old_cwd);

  const std::string actual =
      "exit: " + std::to_string(code) + "\n--- stdout\n" + out.str() + "--- stderr\n" + err.str();
  const fs::path expected_path = dir / "expected";
  if (const char* update = std::getenv("PIHYDRATE_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(expected_path.string(), std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(expected_path)) << "no expected file; run with PIHYDRATE_UPDATE_GOLDEN=1 and review it";
  EXPECT_EQ(read_file(expected_path), actual) << "golden case " << GetParam();
}

std::string case_name(const ::testing::TestParamInfo<std::string>& param) {
  std::string name = param.param;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, ::testing::ValuesIn(discover_cases()), case_name);

}  // namespace
