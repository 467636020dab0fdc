// find_pi_session_dir follows pi's order: PI_CODING_AGENT_SESSION_DIR, the
// settings' sessionDir (project over global), then the agent dir's per-cwd
// folder (PI_CODING_AGENT_DIR or ~/.pi/agent).
#include "pihydrate/pi_paths.h"

#include <fstream>

#include <gtest/gtest.h>
#include <boost/filesystem.hpp>

namespace pihydrate {
namespace {

namespace fs = boost::filesystem;

class PiPathsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / fs::unique_path("pihydrate-paths-%%%%-%%%%");
    fs::create_directories(root_ / "work");
    fs::create_directories(root_ / "home");
    env_.home = (root_ / "home").string();
  }
  void TearDown() override { fs::remove_all(root_); }
  void write(const fs::path& file, const std::string& text) {
    fs::create_directories(file.parent_path());
    std::ofstream(file.string()) << text;
  }
  std::optional<PiSessionDir> find() { return find_pi_session_dir(cwd(), env_, why_); }
  std::string cwd() const { return (root_ / "work").string(); }

  fs::path root_;
  PiEnvironment env_;
  std::string why_;
};

std::string pi_encoding(std::string cwd) {
  cwd.erase(0, 1);
  for (char& c : cwd)
    if (c == '/') c = '-';
  return "--" + cwd + "--";
}

TEST_F(PiPathsTest, DefaultIsHomeAgentDirPerCwdFolder) {
  auto dir = find();
  ASSERT_TRUE(dir) << why_;
  EXPECT_EQ(dir->path, (root_ / "home/.pi/agent/sessions" / pi_encoding(cwd())).string());
  EXPECT_FALSE(dir->flat);
  EXPECT_EQ(dir->source, "~/.pi/agent");
}

TEST_F(PiPathsTest, AgentDirVariableWithTilde) {
  env_.agent_dir = "~/agents/pi";
  auto dir = find();
  ASSERT_TRUE(dir) << why_;
  EXPECT_EQ(dir->path, (root_ / "home/agents/pi/sessions" / pi_encoding(cwd())).string());
  EXPECT_EQ(dir->source, "PI_CODING_AGENT_DIR");
}

TEST_F(PiPathsTest, SessionDirVariableIsFlatAndWins) {
  env_.agent_dir = (root_ / "agent").string();
  env_.session_dir = (root_ / "flat/").string();
  write(root_ / "agent/settings.json", R"({"sessionDir": "/elsewhere"})");
  auto dir = find();
  ASSERT_TRUE(dir) << why_;
  EXPECT_EQ(dir->path, (root_ / "flat").string());
  EXPECT_TRUE(dir->flat);
}

TEST_F(PiPathsTest, EmptyVariablesCountAsUnset) {
  env_.session_dir = "";
  env_.agent_dir = "";
  auto dir = find();
  ASSERT_TRUE(dir) << why_;
  EXPECT_EQ(dir->path, (root_ / "home/.pi/agent/sessions" / pi_encoding(cwd())).string());
}

TEST_F(PiPathsTest, RelativeSessionDirIsTakenFromTheCwd) {
  env_.session_dir = "sessions";
  auto dir = find();
  ASSERT_TRUE(dir) << why_;
  EXPECT_EQ(dir->path, (root_ / "work/sessions").string());
}

TEST_F(PiPathsTest, ProjectSettingsOverGlobalSettings) {
  env_.agent_dir = (root_ / "agent").string();
  write(root_ / "agent/settings.json", R"({"sessionDir": "/global/sessions"})");
  auto global = find();
  ASSERT_TRUE(global) << why_;
  EXPECT_EQ(global->path, "/global/sessions");
  EXPECT_TRUE(global->flat);
  write(root_ / "work/.pi/settings.json", R"({"theme": "dark", "sessionDir": "~/project-sessions"})");
  auto project = find();
  ASSERT_TRUE(project) << why_;
  EXPECT_EQ(project->path, (root_ / "home/project-sessions").string());
  EXPECT_NE(project->source.find(".pi/settings.json"), std::string::npos);
}

TEST_F(PiPathsTest, BrokenOrUnrelatedSettingsAreSkipped) {
  env_.agent_dir = (root_ / "agent").string();
  write(root_ / "agent/settings.json", "{not json");
  write(root_ / "work/.pi/settings.json", R"({"sessionDir": 5})");
  auto dir = find();
  ASSERT_TRUE(dir) << why_;
  EXPECT_EQ(dir->path, (root_ / "agent/sessions" / pi_encoding(cwd())).string());
}

TEST_F(PiPathsTest, NoHomeIsAnErrorThatSaysSo) {
  env_.home.reset();
  EXPECT_FALSE(find());
  EXPECT_NE(why_.find("HOME"), std::string::npos);
  env_.agent_dir = "/agent";
  auto dir = find();
  ASSERT_TRUE(dir) << why_;
  EXPECT_EQ(dir->path, "/agent/sessions/" + pi_encoding(cwd()));
}

}  // namespace
}  // namespace pihydrate
