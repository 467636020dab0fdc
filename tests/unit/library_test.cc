// The library's one-call jobs (pihydrate.h): the same bytes as the command,
// diagnostics at the input's positions, nothing left behind on failure.
#include "pihydrate/pihydrate.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "common/text_files.h"

#include "pihydrate/cli.h"
#include "pihydrate/errors.h"
#include "pihydrate/session_tree.h"

namespace pihydrate {
namespace {

using test_support::read_file;
using test_support::TextSink;

namespace fs = std::filesystem;

const fs::path kSource = PIHYDRATE_SOURCE_DIR;
const fs::path kThread = kSource / "examples" / "thread.json";
const fs::path kSession = kSource / "examples" / "session.jsonl";

// A fresh directory, removed with what it holds.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "library-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// What `pi-hydrate ARGS -o -` writes on standard output.
std::string command_output(std::vector<std::string> args) {
  args.insert(args.end(), {"-o", "-"});
  std::istringstream in;
  std::ostringstream out, err;
  EXPECT_EQ(run_cli(args, in, out, err), kExitOk) << err.str();
  return out.str();
}

HydrateRequest request_for(const std::string& cwd) {
  HydrateRequest request;
  request.cwd = cwd;
  return request;
}

TEST(Library, ThreadBytesToASinkAreTheCommandsBytes) {
  const std::string expected = command_output({"--thread", kThread.string(), "--cwd", "/tmp"});
  ASSERT_FALSE(expected.empty());
  TextSink sink;
  const HydrateResult result =
      hydrate_thread(Input::bytes(read_file(kThread), "thread.json"), request_for("/tmp"), Output::lines(sink));
  ASSERT_TRUE(result.ok);
  EXPECT_TRUE(result.path.empty());
  EXPECT_EQ(sink.text, expected);
  EXPECT_GT(result.report.entries_read, 0u);
  EXPECT_FALSE(result.report.session_id.empty());
}

TEST(Library, ThreadFileToAFileIsTheCommandsBytesAndValidates) {
  TempDir dir;
  const fs::path target = dir.path() / "new" / "s.jsonl";  // its directory is made
  const HydrateResult result =
      hydrate_thread(Input::file(kThread.string()), request_for("/tmp"), Output::file(target.string()));
  ASSERT_TRUE(result.ok);
  EXPECT_EQ(result.path, target.string());
  EXPECT_EQ(read_file(target), command_output({"--thread", kThread.string(), "--cwd", "/tmp"}));
  EXPECT_EQ((fs::status(target).permissions() & fs::perms::all), fs::perms::owner_read | fs::perms::owner_write);
  const FileReport verdict = validate_file(target.string());
  EXPECT_TRUE(verdict.loadable);
  EXPECT_TRUE(verdict.resumable);
  EXPECT_EQ(verdict.errors, 0u);
  // An existing target is refused without overwrite, and replaced with it.
  EXPECT_THROW(hydrate_thread(Input::file(kThread.string()), request_for("/tmp"), Output::file(target.string())),
               IoError);
  EXPECT_TRUE(
      hydrate_thread(Input::file(kThread.string()), request_for("/tmp"), Output::file(target.string(), true)).ok);
}

TEST(Library, DiagnosticsNameTheThreadsEntriesAndPositions) {
  const fs::path input = kSource / "tests" / "golden" / "thread" / "aborted-assistant-results" / "input.json";
  TextSink sink;
  const HydrateResult result = hydrate_thread(Input::file(input.string()), request_for("/tmp"), Output::lines(sink));
  ASSERT_TRUE(result.ok);
  ASSERT_EQ(result.report.diagnostics.size(), 2u);
  const Diagnostic& d = result.report.diagnostics[0];
  EXPECT_EQ(d.file, input.string());
  EXPECT_EQ(d.line, 8u);
  EXPECT_EQ(d.column, 5u);
  EXPECT_EQ(d.message.rfind("entries[2] (id \"thr_aborted:pi:idx:1\"): dropped the tool result for \"call_x1\"", 0), 0u)
      << d.message;
  EXPECT_EQ(result.report.repairs.at("dropped-result-of-aborted-assistant"), 2u);
}

TEST(Library, AThreadThatCannotBeConvertedWritesNothingAndLeavesNoDirectory) {
  const fs::path input = kSource / "tests" / "golden" / "thread" / "err-assistant-without-message" / "input.json";
  TempDir dir;
  const fs::path sessions = dir.path() / "a" / "b";
  const HydrateResult result =
      hydrate_thread(Input::file(input.string()), request_for("/tmp"), Output::directory(sessions.string()));
  EXPECT_FALSE(result.ok);
  EXPECT_FALSE(result.input_converted);
  ASSERT_FALSE(result.report.diagnostics.empty());
  EXPECT_EQ(result.report.diagnostics[0].severity, Severity::kError);
  EXPECT_EQ(result.report.diagnostics[0].message.rfind("entries[", 0), 0u) << result.report.diagnostics[0].message;
  EXPECT_FALSE(fs::exists(dir.path() / "a"));
}

TEST(Library, AFailedVerificationLeavesNoOutputFile) {
  TempDir dir;
  const fs::path target = dir.path() / "s.jsonl";
  HydrateRequest request = request_for((dir.path() / "not-made-yet").string());
  const HydrateResult refused = hydrate_thread(Input::file(kThread.string()), request, Output::file(target.string()));
  EXPECT_FALSE(refused.ok);
  EXPECT_TRUE(refused.input_converted);
  bool named = false;
  for (const Diagnostic& d : refused.report.diagnostics)
    named = named || d.message.rfind("output failed verification: ", 0) == 0;
  EXPECT_TRUE(named);
  EXPECT_TRUE(fs::is_empty(dir.path()));  // neither the file nor a temporary one
  // Without the cwd check (--allow-missing-cwd) it is written.
  request.cwd_must_exist = false;
  EXPECT_TRUE(hydrate_thread(Input::file(kThread.string()), request, Output::file(target.string())).ok);
}

TEST(Library, SessionFileToADirectoryIsTheCommandsBytes) {
  TempDir dir;
  const HydrateResult result =
      hydrate_session(Input::file(kSession.string()), request_for("/tmp"), Output::directory(dir.path().string()));
  ASSERT_TRUE(result.ok);
  const fs::path written = result.path;
  EXPECT_EQ(written.parent_path(), dir.path());
  EXPECT_EQ(written.filename().string().find(result.report.session_id + ".jsonl"),
            written.filename().string().size() - result.report.session_id.size() - 6);
  EXPECT_EQ(read_file(written), command_output({"--session", kSession.string(), "--cwd", "/tmp"}));
  // From a stream, the same bytes.
  std::ifstream in(kSession, std::ios::binary);
  TextSink sink;
  ASSERT_TRUE(hydrate_session(Input::stream(in), request_for("/tmp"), Output::lines(sink)).ok);
  EXPECT_EQ(sink.text, read_file(written));
}

TEST(Library, ValidateFileIsTheCommandsVerdictAndAMissingFileThrows) {
  const FileReport report = validate_file(kSession.string());
  EXPECT_TRUE(report.loadable);
  EXPECT_EQ(report.file, kSession.string());
  EXPECT_THROW(validate_file((kSource / "no-such-file.jsonl").string()), IoError);
}

TEST(Library, ResumeContextListsWhatPiSendsAndPicksABranch) {
  const std::string session =
      R"({"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/nowhere"})"
      "\n"
      R"({"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"first","timestamp":1}})"
      "\n"
      R"({"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"second","timestamp":2}})"
      "\n";
  ContextReport report = resume_context(Input::bytes(session, "s.jsonl"));
  ASSERT_TRUE(report.context.loads);
  ASSERT_EQ(report.context.messages.size(), 2u);  // the cwd is not checked
  EXPECT_EQ(report.context.leaf_id, std::optional<std::string>("a2"));
  EXPECT_EQ(report.context.leaf_line, 3u);
  ContextOptions first;
  first.leaf_id = "a1";
  report = resume_context(Input::bytes(session, "s.jsonl"), first);
  ASSERT_EQ(report.context.messages.size(), 1u);
  ContextOptions missing;
  missing.leaf_id = "zz";
  report = resume_context(Input::bytes(session, "s.jsonl"), missing);
  EXPECT_FALSE(report.bad_branch.empty());
  report = resume_context(Input::bytes("not a session\n", "bad.jsonl"));
  EXPECT_FALSE(report.context.loads);
  EXPECT_FALSE(report.errors.empty());
}

// A tree keeps its nodes' links and reads what each says from its line when
// asked, after read_session_tree has returned (it keeps the index and file).
TEST(Library, SessionTreeReadsItsNodesWhenAsked) {
  const std::string session =
      R"({"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/nowhere"})"
      "\n"
      R"({"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"first\n  question","timestamp":1}})"
      "\n"
      R"({"type":"message","id":"a2","parentId":"a1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"one way","timestamp":2}})"
      "\n"
      R"({"type":"message","id":"a3","parentId":"a1","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{}}],"stopReason":"error","timestamp":3}})"
      "\n"
      R"({"type":"label","id":"a4","parentId":"a3","timestamp":"2026-01-01T00:00:04.000Z","targetId":"a2","label":"kept"})"
      "\n";
  const SessionTree tree = read_session_tree(Input::bytes(session, "s.jsonl"), newest_pi_version());
  ASSERT_TRUE(tree.loads);
  ASSERT_EQ(tree.size(), 4u);
  EXPECT_EQ(tree.parent(0), -1);
  EXPECT_EQ(tree.parent(1), 0);
  EXPECT_EQ(tree.parent(2), 0);
  EXPECT_EQ(tree.leaf, 3);  // the last entry
  EXPECT_TRUE(tree.on_path(0));
  EXPECT_FALSE(tree.on_path(1));
  EXPECT_EQ(tree.line(2), 4u);
  const TreeNode first = tree.node(0);
  EXPECT_EQ(first.id, "a1");
  EXPECT_EQ(first.kind, "user");
  EXPECT_EQ(first.text, "first question");
  EXPECT_EQ(tree.node(1).label, "kept");
  const TreeNode call = tree.node(2);  // asked out of file order, then again
  EXPECT_EQ(call.tool_calls, std::vector<std::string>{"bash"});
  EXPECT_EQ(call.stop_reason, "error");
  EXPECT_TRUE(call.on_path);
  EXPECT_EQ(tree.node(0).text, "first question");
  EXPECT_EQ(tree.node(3).text, "kept -> a2");
  const SessionTree copy = tree;  // copies share the nodes
  EXPECT_EQ(copy.node(1).id, "a2");
  EXPECT_EQ(read_session_tree(Input::bytes("not a session\n", "bad.jsonl"), newest_pi_version()).size(), 0u);
}

TEST(Library, StreamedContextHandsOnTheSameMessagesAfterAHeadThatCountsThem) {
  std::string session =
      R"({"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/nowhere"})"
      "\n";
  std::string parent = "null";
  for (int i = 1; i <= 50; ++i) {
    const std::string id = "\"m" + std::to_string(i) + "\"";
    session += R"({"type":"message","id":)" + id + R"(,"parentId":)" + parent +
               R"(,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"turn )" +
               std::to_string(i) + R"(","timestamp":1}})" + "\n";
    parent = id;
  }
  const ContextReport kept = resume_context(Input::bytes(session, "s.jsonl"));
  ASSERT_EQ(kept.context.messages.size(), 50u);
  EXPECT_EQ(kept.context.message_count, 50u);

  int heads = 0;
  std::vector<std::string> texts;
  const ContextReport streamed = resume_context(
      Input::bytes(session, "s.jsonl"), ContextOptions{},
      [&](const ContextReport& head) {
        ++heads;
        EXPECT_EQ(head.context.message_count, 50u);
        EXPECT_TRUE(texts.empty());  // the head comes first
      },
      [&](SentMessage&& m) { texts.push_back(m.texts.at(0)); });
  EXPECT_EQ(heads, 1);
  EXPECT_TRUE(streamed.context.messages.empty());
  ASSERT_EQ(texts.size(), 50u);
  for (std::size_t i = 0; i < texts.size(); ++i) EXPECT_EQ(texts[i], kept.context.messages[i].texts.at(0));

  // pi-ai throws on an assistant whose content is not an array: nothing is sent, nothing is handed on.
  session +=
      R"({"type":"message","id":"a","parentId":"m50","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"assistant","content":7,"stopReason":"stop","timestamp":2}})"
      "\n";
  heads = 0;
  texts.clear();
  const ContextReport failed = resume_context(
      Input::bytes(session, "s.jsonl"), ContextOptions{}, [&](const ContextReport&) { ++heads; },
      [&](SentMessage&& m) { texts.push_back(m.role); });
  EXPECT_FALSE(failed.context.request_error.empty());
  EXPECT_EQ(failed.context.message_count, 0u);
  EXPECT_EQ(heads, 0);
  EXPECT_TRUE(texts.empty());
}

TEST(Library, PhasesAreReportedInOrder) {
  TextSink sink;
  std::vector<std::string> phases;
  ProcessHooks hooks;
  hooks.on_phase = [&phases](const char* name) { phases.emplace_back(name); };
  const HydrateResult result =
      hydrate_thread(Input::bytes(read_file(kThread), "thread.json"), request_for("/tmp"), Output::lines(sink), hooks);
  ASSERT_TRUE(result.ok);
  EXPECT_EQ(phases,
            (std::vector<std::string>{"converting the thread export", "writing the session", "verifying the output"}));
}

}  // namespace
}  // namespace pihydrate
