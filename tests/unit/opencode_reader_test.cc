// OpenCode sessions -> pi sessions (docs/opencode.md): the database read
// without a trace (O1), the session chosen, and the mapping rules a
// recording alone does not pin down, each on a small database or export
// made here. Kilo CLI's reader, the same code under Kilo's names (KL1-KL3),
// at the end.
#include <dirent.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include <gtest/gtest.h>

#include <rapidjson/document.h>

#include "readers/readers.h"

namespace pihydrate {
namespace {

// A file as the job hands it to a reader.
class FileInput final : public ReaderInput {
 public:
  explicit FileInput(std::string path) : path_(std::move(path)), fd_(::open(path_.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~FileInput() override {
    if (fd_ >= 0) ::close(fd_);
  }
  const std::string& name() const override { return path_; }
  int fd() const override { return fd_; }
  std::string read_all() const override {
    std::ifstream in(path_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::unique_ptr<MappedReadGuard> guard_mapped_read() const override { return nullptr; }

 private:
  std::string path_;
  int fd_;
};

class TempDir {
 public:
  TempDir() {
    std::string pattern = ::testing::TempDir() + "opencode-XXXXXX";
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() { std::system(("chmod -R u+w '" + path + "' && rm -rf '" + path + "'").c_str()); }
  std::string path;
};

void exec(sqlite3* db, const std::string& sql) {
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "") << "\n" << sql;
}

std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// A database shaped as OpenCode 1.18's tables (the columns the reader reads, and a few more); with
// `kilo`, Kilo CLI 7.7's, which adds tables of its own (KL1).
class Db {
 public:
  explicit Db(const std::string& path, bool kilo = false) {
    EXPECT_EQ(sqlite3_open(path.c_str(), &db_), SQLITE_OK);
    exec(db_, "PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;");
    exec(db_,
         "CREATE TABLE session (id text PRIMARY KEY, project_id text NOT NULL, parent_id text, slug text NOT NULL, "
         "directory text NOT NULL, title text NOT NULL, version text NOT NULL, revert text, "
         "time_created integer NOT NULL, time_updated integer NOT NULL);"
         "CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, "
         "time_updated integer NOT NULL, data text NOT NULL);"
         "CREATE TABLE part (id text PRIMARY KEY, message_id text NOT NULL, session_id text NOT NULL, "
         "time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL);");
    if (kilo)
      exec(db_,
           "CREATE TABLE `kilo_board` (`root_session_id` text PRIMARY KEY, `time_created` integer NOT NULL);"
           "CREATE TABLE `kilo_board_message` (`id` text PRIMARY KEY, `board_root_session_id` text NOT NULL);");
  }
  ~Db() { sqlite3_close(db_); }
  void session(const std::string& id, std::int64_t updated, const std::string& title = "A title",
               const std::string& parent = "", const std::string& revert = "") {
    exec(db_, "INSERT INTO session VALUES (" + quoted(id) + ", 'global', " +
                  (parent.empty() ? "NULL" : quoted(parent)) + ", 'slug', '/home/me/repo', " + quoted(title) +
                  ", '1.18.33', " + (revert.empty() ? "NULL" : quoted(revert)) + ", 1795846000000, " +
                  std::to_string(updated) + ")");
  }
  void message(const std::string& session, const std::string& id, std::int64_t at, const std::string& data) {
    exec(db_, "INSERT INTO message VALUES (" + quoted(id) + ", " + quoted(session) + ", " + std::to_string(at) + ", " +
                  std::to_string(at) + ", " + quoted(data) + ")");
  }
  void part(const std::string& session, const std::string& message, const std::string& id, const std::string& data) {
    exec(db_, "INSERT INTO part VALUES (" + quoted(id) + ", " + quoted(message) + ", " + quoted(session) + ", 0, 0, " +
                  quoted(data) + ")");
  }
  sqlite3* handle() { return db_; }

 private:
  sqlite3* db_ = nullptr;
};

const char* kUser = R"({"role":"user","time":{"created":1795846051458},"agent":"build"})";
std::string assistant(const std::string& parent, const std::string& finish, const std::string& extra = "") {
  return R"({"parentID":")" + parent +
         R"(","role":"assistant","modelID":"claude-sonnet-4-5","providerID":"anthropic","tokens":{"input":10,"output":2,"reasoning":0,"cache":{"write":0,"read":3}},"time":{"created":1795846053571},"finish":")" +
         finish + "\"" + extra + "}";
}
std::string text_part(const std::string& text) { return R"({"type":"text","text":")" + text + "\"}"; }
std::string tool_part(const std::string& call, const std::string& state) {
  return R"({"type":"tool","tool":"bash","callID":")" + call + R"(","state":)" + state + "}";
}

// One small conversation in session `id`: a prompt, a call that fails (exit 1), the answer.
void conversation(Db& db, const std::string& id, const std::string& prompt) {
  db.message(id, "msg_" + id + "_1", 1795846051458, kUser);
  db.part(id, "msg_" + id + "_1", "prt_" + id + "_1", text_part(prompt));
  db.message(id, "msg_" + id + "_2", 1795846053571, assistant("msg_" + id + "_1", "tool-calls"));
  db.part(id, "msg_" + id + "_2", "prt_" + id + "_2", R"({"type":"step-start"})");
  db.part(id, "msg_" + id + "_2", "prt_" + id + "_3",
          R"({"type":"reasoning","text":"Look at it.","metadata":{"anthropic":{"signature":"c2ln"}}})");
  db.part(
      id, "msg_" + id + "_2", "prt_" + id + "_4",
      tool_part(
          "toolu_1",
          R"({"status":"completed","input":{"command":"cat missing.txt"},"output":"cat: missing.txt: No such file or directory\n","metadata":{"exit":1},"time":{"start":1,"end":2}})"));
  db.part(id, "msg_" + id + "_2", "prt_" + id + "_5", R"({"type":"step-finish","reason":"tool-calls"})");
  db.message(id, "msg_" + id + "_3", 1795846055000, assistant("msg_" + id + "_1", "stop"));
  db.part(id, "msg_" + id + "_3", "prt_" + id + "_6", text_part("It is missing."));
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A folder's names with each file's bytes: what "left exactly as it was" compares.
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> files;
  DIR* d = ::opendir(dir.c_str());
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") files[name] = bytes_of(dir + "/" + name);
  }
  ::closedir(d);
  return files;
}

// Copies the database and its -wal as they are now (the rows still only in the -wal) into `to`.
void copy_live(const std::string& from, const std::string& to) {
  for (const char* suffix : {"", "-wal"}) {
    std::ofstream out(to + "/opencode.db" + suffix, std::ios::binary);
    out << bytes_of(from + "/opencode.db" + suffix);
  }
}

struct Converted {
  ReadSession read;
  std::vector<rapidjson::Document> entries;
  std::string text;
};

Converted read_file(const std::string& path, std::optional<std::string> leaf = std::nullopt,
                    const Reader& reader = opencode_reader()) {
  Converted c;
  const FileInput input(path);
  ReadOptions options;
  options.leaf = std::move(leaf);
  c.read = reader.read(input, options);
  if (c.read.ok() && c.read.lines) {
    std::string scratch;
    for (const Entry& e : c.read.index.entries) {
      const std::string line(c.read.lines->read(e.offset, e.length, scratch));
      c.text += line + "\n";
      c.entries.emplace_back().Parse(line.c_str());
    }
  }
  return c;
}

std::string messages_of(const Converted& c) {
  std::string out;
  for (const Diagnostic& d : c.read.diagnostics) out += d.message + " | " + d.hint + "\n";
  return out;
}

// A database written by a live connection, whose rows are only in its -wal (as OpenCode leaves it).
std::string wal_only_database(const TempDir& dir, const std::function<void(Db&)>& fill, bool kilo = false) {
  TempDir live;
  Db db(live.path + "/opencode.db", kilo);
  fill(db);
  copy_live(live.path, dir.path);
  return dir.path + "/opencode.db";
}

// One session, one small conversation.
std::string one_session_database(const TempDir& dir) {
  return wal_only_database(dir, [](Db& db) {
    db.session("ses_a", 1795846000001);
    conversation(db, "ses_a", "hello");
  });
}

// Two sessions: ses_old ("first") and, updated later, ses_new ("second").
std::string two_session_database(const TempDir& dir) {
  return wal_only_database(dir, [](Db& db) {
    db.session("ses_old", 1795846000001, "Old one");
    conversation(db, "ses_old", "first");
    db.session("ses_new", 1795846099999, "New one");
    conversation(db, "ses_new", "second");
  });
}

TEST(OpenCode, BidsOnTheSqliteMagicAndOnAnExport) {
  const auto format_of = [](const std::string& head) {
    const Reader* r = ReaderRegistry::standard().choose(make_input_head(head, false));
    return r == nullptr ? std::string("none") : std::string(r->info().name);
  };
  EXPECT_EQ(format_of(std::string("SQLite format 3\0\x10\0\x02\x02", 21)), "opencode");
  EXPECT_EQ(format_of("{\n  \"info\": {\n    \"id\": \"ses_ddf3\",\n    \"slug\": \"neon\""), "opencode");
  EXPECT_EQ(format_of("{\"info\":{\"id\":\"msg_1\"}}"), "none");
  EXPECT_EQ(format_of(std::string("SQLite format 2\0", 16)), "none");
}

// O1: the newest session of a database whose rows are all in its -wal; the
// files and the folder are the same afterwards, byte for byte.
TEST(OpenCode, ReadsTheWalAndLeavesTheFilesAsTheyWere) {
  TempDir dir;
  const std::string path = two_session_database(dir);
  ASSERT_GT(bytes_of(path + "-wal").size(), 0u);
  const auto before = snapshot(dir.path);
  const Converted c = read_file(path);
  EXPECT_EQ(snapshot(dir.path), before);
  ASSERT_TRUE(c.read.ok()) << messages_of(c);
  EXPECT_EQ(c.read.session_id, "ses_new");
  EXPECT_NE(c.text.find("\"second\""), std::string::npos);
  EXPECT_EQ(c.text.find("\"first\""), std::string::npos);
  // Which one was taken, and the others, are said.
  ASSERT_EQ(c.read.diagnostics.size(), 1u);
  EXPECT_EQ(c.read.diagnostics[0].code, Code::kTranscriptRecordDropped);
  EXPECT_NE(c.read.diagnostics[0].message.find("converted ses_new (the newest"), std::string::npos);
  EXPECT_NE(c.read.diagnostics[0].hint.find("ses_old"), std::string::npos);
  EXPECT_EQ(c.read.repairs.at("opencode-other-sessions"), 1u);
}

// O1: a folder nobody may write to (as root too, nothing is written: the listing is the same).
TEST(OpenCode, ReadsFromAFolderThatCannotBeWritten) {
  TempDir dir;
  const std::string path = one_session_database(dir);
  ASSERT_EQ(::chmod(dir.path.c_str(), 0555), 0);
  ASSERT_EQ(::chmod(path.c_str(), 0444), 0);
  ASSERT_EQ(::chmod((path + "-wal").c_str(), 0444), 0);
  const auto before = snapshot(dir.path);
  const Converted c = read_file(path);
  EXPECT_EQ(snapshot(dir.path), before);
  EXPECT_TRUE(c.read.ok()) << messages_of(c);
  EXPECT_TRUE(c.read.diagnostics.empty()) << messages_of(c);
}

// O1: --leaf names a session; an id the database lacks lists them.
TEST(OpenCode, LeafNamesTheSession) {
  TempDir dir;
  const std::string path = two_session_database(dir);
  const Converted old = read_file(path, "ses_old");
  ASSERT_TRUE(old.read.ok()) << messages_of(old);
  EXPECT_EQ(old.read.session_id, "ses_old");
  EXPECT_NE(old.text.find("\"first\""), std::string::npos);
  const Converted missing = read_file(path, "list");
  ASSERT_FALSE(missing.read.ok());
  EXPECT_EQ(missing.read.diagnostics[0].code, Code::kBranchNotFound);
  EXPECT_NE(missing.read.diagnostics[0].hint.find("ses_old"), std::string::npos);
  EXPECT_NE(missing.read.diagnostics[0].hint.find("ses_new"), std::string::npos);
}

// O3, O5, O6, O7, O11: calls, a failed command as OpenCode sends it, thinking with its signature.
TEST(OpenCode, MapsCallsResultsAndThinking) {
  TempDir dir;
  const std::string path = wal_only_database(dir, [](Db& db) {
    db.session("ses_a", 1795846000001, "Missing file");
    conversation(db, "ses_a", "\\\"Show missing.txt.\\\"");
  });
  const Converted c = read_file(path);
  ASSERT_TRUE(c.read.ok()) << messages_of(c);
  ASSERT_EQ(c.entries.size(), 6u) << c.text;  // header, user, assistant, result, assistant, session_info
  EXPECT_STREQ(c.entries[0]["id"].GetString(), "ses_a");
  EXPECT_STREQ(c.entries[0]["cwd"].GetString(), "/home/me/repo");
  EXPECT_STREQ(c.entries[1]["message"]["content"][0]["text"].GetString(), "\"Show missing.txt.\"");
  const auto& a = c.entries[2]["message"];
  EXPECT_STREQ(a["content"][0]["type"].GetString(), "thinking");
  EXPECT_STREQ(a["content"][0]["thinkingSignature"].GetString(), "c2ln");
  EXPECT_STREQ(a["content"][1]["type"].GetString(), "toolCall");
  EXPECT_STREQ(a["content"][1]["id"].GetString(), "toolu_1");
  EXPECT_STREQ(a["content"][1]["arguments"]["command"].GetString(), "cat missing.txt");
  EXPECT_STREQ(a["stopReason"].GetString(), "toolUse");
  EXPECT_STREQ(a["api"].GetString(), "anthropic-messages");
  EXPECT_EQ(a["usage"]["cacheRead"].GetInt(), 3);
  const auto& r = c.entries[3]["message"];
  EXPECT_STREQ(r["role"].GetString(), "toolResult");
  EXPECT_STREQ(r["toolCallId"].GetString(), "toolu_1");
  EXPECT_FALSE(r["isError"].GetBool());  // exit 1 is a completed call: the model saw a plain result
  EXPECT_STREQ(c.entries[4]["message"]["stopReason"].GetString(), "stop");
  EXPECT_STREQ(c.entries[5]["name"].GetString(), "Missing file");
  EXPECT_EQ(c.read.repairs.at("opencode-failed-commands"), 1u);
  EXPECT_EQ(c.read.repairs.at("opencode-bookkeeping-parts"), 2u);
}

// O6: a call that failed, and one that never finished.
TEST(OpenCode, ErroredAndUnfinishedCallsAreErrors) {
  TempDir dir;
  const std::string path = wal_only_database(dir, [](Db& db) {
    db.session("ses_a", 1795846000001);
    db.message("ses_a", "msg_1", 1, kUser);
    db.part("ses_a", "msg_1", "prt_1", text_part("go"));
    db.message("ses_a", "msg_2", 2, assistant("msg_1", "tool-calls"));
    db.part("ses_a", "msg_2", "prt_2", tool_part("c1", R"({"status":"error","input":{},"error":"denied"})"));
    db.part("ses_a", "msg_2", "prt_3", tool_part("c2", R"({"status":"running","input":{}})"));
  });
  const Converted c = read_file(path);
  ASSERT_TRUE(c.read.ok()) << messages_of(c);
  ASSERT_EQ(c.entries.size(), 6u) << c.text;
  EXPECT_STREQ(c.entries[3]["message"]["content"][0]["text"].GetString(), "denied");
  EXPECT_TRUE(c.entries[3]["message"]["isError"].GetBool());
  EXPECT_STREQ(c.entries[4]["message"]["content"][0]["text"].GetString(), "[Tool execution was interrupted]");
  EXPECT_TRUE(c.entries[4]["message"]["isError"].GetBool());
}

// O8: a compaction and its summary become one compaction entry; O10: reverted messages are left out.
TEST(OpenCode, CompactionAndRevert) {
  TempDir dir;
  const std::string path = wal_only_database(dir, [](Db& db) {
    db.session("ses_a", 1795846000001, "t", "", R"({"messageID":"msg_6"})");
    db.message("ses_a", "msg_1", 1, kUser);
    db.part("ses_a", "msg_1", "prt_1", text_part("hello"));
    db.message("ses_a", "msg_2", 2, assistant("msg_1", "stop"));
    db.part("ses_a", "msg_2", "prt_2", text_part("hi"));
    db.message("ses_a", "msg_3", 3, kUser);
    db.part("ses_a", "msg_3", "prt_3", R"({"type":"compaction","auto":true})");
    db.message("ses_a", "msg_4", 4, assistant("msg_3", "stop", ",\"summary\":true"));
    db.part("ses_a", "msg_4", "prt_4", text_part("They greeted."));
    db.message("ses_a", "msg_5", 5, kUser);
    db.part("ses_a", "msg_5", "prt_5", text_part("bye"));
    db.message("ses_a", "msg_6", 6, kUser);
    db.part("ses_a", "msg_6", "prt_6", text_part("undone"));
  });
  const Converted c = read_file(path);
  ASSERT_TRUE(c.read.ok()) << messages_of(c);
  ASSERT_EQ(c.entries.size(), 6u) << c.text;  // header, user, assistant, compaction, user, session_info
  EXPECT_STREQ(c.entries[3]["type"].GetString(), "compaction");
  EXPECT_STREQ(c.entries[3]["summary"].GetString(), "They greeted.");
  EXPECT_STREQ(c.entries[3]["firstKeptEntryId"].GetString(), c.entries[3]["id"].GetString());
  EXPECT_STREQ(c.entries[4]["message"]["content"][0]["text"].GetString(), "bye");
  EXPECT_EQ(c.read.repairs.at("opencode-reverted-messages"), 1u);
}

// O1: what is not an OpenCode database SQLite can read is PH605, never a crash.
TEST(OpenCode, CorruptDatabasesAreErrors) {
  TempDir dir;
  const std::string good = one_session_database(dir);
  // Checkpointed into the main file, so that cutting it loses rows.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(good.c_str(), &db), SQLITE_OK);
    exec(db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
    sqlite3_close(db);
  }
  const std::string whole = bytes_of(good);
  ASSERT_GT(whole.size(), 8192u);
  const auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir.path + "/" + name, std::ios::binary) << bytes;
    return dir.path + "/" + name;
  };
  std::string garbage = whole;
  for (std::size_t i = 4096; i < garbage.size(); ++i) garbage[i] = static_cast<char>(i * 7);
  for (const std::string& path : {write("cut.db", whole.substr(0, 5000)), write("garbage.db", garbage),
                                  write("header-only.db", whole.substr(0, 100))}) {
    const Converted c = read_file(path);
    ASSERT_FALSE(c.read.ok()) << path;
    EXPECT_EQ(c.read.diagnostics[0].code, Code::kTranscriptInvalid) << path;
  }
  // A SQLite database without OpenCode's tables.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir.path + "/other.db").c_str(), &db), SQLITE_OK);
    exec(db, "CREATE TABLE notes (id integer)");
    sqlite3_close(db);
  }
  const Converted other = read_file(dir.path + "/other.db");
  ASSERT_FALSE(other.read.ok());
  EXPECT_NE(other.read.diagnostics[0].message.find("not an OpenCode database"), std::string::npos);
  // A row whose data is not JSON.
  const std::string bad = wal_only_database(dir, [](Db& db) {
    db.session("ses_b", 1795846000001);
    db.message("ses_b", "msg_1", 1, "{not json");
  });
  const Converted row = read_file(bad);
  ASSERT_FALSE(row.read.ok());
  EXPECT_NE(row.read.diagnostics[0].message.find("message msg_1"), std::string::npos);
}

// An export is read as the database's session is.
TEST(OpenCode, ReadsAnExport) {
  TempDir dir;
  const std::string path = dir.path + "/s.json";
  std::ofstream(path) << R"({
  "info": {"id": "ses_x", "directory": "/w", "title": "T", "time": {"created": 1795846000000, "updated": 1}},
  "messages": [
    {"info": {"id": "msg_1", "role": "user", "time": {"created": 1795846000001}},
     "parts": [{"type": "text", "text": "hi", "id": "prt_1"}]},
    {"info": {"id": "msg_2", "role": "assistant", "parentID": "msg_1", "providerID": "p", "modelID": "claude-x",
              "time": {"created": 1795846000002}, "finish": "stop"},
     "parts": [{"type": "text", "text": "hello", "id": "prt_2"}]}
  ]
})";
  const Converted c = read_file(path);
  ASSERT_TRUE(c.read.ok()) << messages_of(c);
  ASSERT_EQ(c.entries.size(), 4u) << c.text;
  EXPECT_STREQ(c.entries[0]["id"].GetString(), "ses_x");
  EXPECT_STREQ(c.entries[2]["message"]["content"][0]["text"].GetString(), "hello");
  std::ofstream(path) << "{\n  \"info\": {\"id\": \"ses_x\"},\n  \"messages\": [\n    {\"info\": 3";
  const Converted cut = read_file(path);
  ASSERT_FALSE(cut.read.ok());
  EXPECT_EQ(cut.read.diagnostics[0].line, 4u);
}

// KL1: a database with Kilo CLI's own tables is Kilo's, by itself; OpenCode's reader bids lower on it
// and as before on OpenCode's; an export, the same JSON from both CLIs, is OpenCode's (KL2).
TEST(KiloCli, BidsOnItsOwnTables) {
  TempDir dir;
  const auto format_of = [](const std::string& path) {
    const std::string head = bytes_of(path).substr(0, 65536);
    const Reader* r = ReaderRegistry::standard().choose(make_input_head(head, false));
    return r == nullptr ? std::string("none") : std::string(r->info().name);
  };
  const auto checkpointed = [&](bool kilo) {
    const std::string path = dir.path + (kilo ? "/kilo.db" : "/opencode.db");
    Db shaped(path, kilo);
    shaped.session("ses_a", 1795846000001);
    conversation(shaped, "ses_a", "hello");
    exec(shaped.handle(), "PRAGMA wal_checkpoint(TRUNCATE)");  // the schema in the file's first page
    return path;
  };
  EXPECT_EQ(format_of(checkpointed(true)), "kilo-cli");
  EXPECT_EQ(format_of(checkpointed(false)), "opencode");
  const std::string kilo_bytes = bytes_of(dir.path + "/kilo.db").substr(0, 65536);  // the head points into it
  const InputHead kilo_head = make_input_head(kilo_bytes, false);
  EXPECT_EQ(opencode_reader().bid(kilo_head), kBidShape);
  EXPECT_EQ(kilo_cli_reader().bid(kilo_head), kBidMarker);
  EXPECT_EQ(kilo_cli_reader().bid(make_input_head("{\n  \"info\": {\n    \"id\": \"ses_ddf3\"", false)), kBidNone);
}

// KL1: Kilo's database is read by OpenCode's rules; the report says Kilo CLI and counts under its name.
TEST(KiloCli, ReadsItsDatabaseByOpenCodesRules) {
  TempDir dir;
  const std::string path = wal_only_database(
      dir,
      [](Db& db) {
        db.session("ses_a", 1795846000001, "Missing file");
        conversation(db, "ses_a", "\\\"Show missing.txt.\\\"");
        db.session("ses_b", 1795846000000, "Older");
        conversation(db, "ses_b", "older");
      },
      true);
  const Converted kilo = read_file(path, std::nullopt, kilo_cli_reader());
  ASSERT_TRUE(kilo.read.ok()) << messages_of(kilo);
  const Converted opencode = read_file(path);
  ASSERT_TRUE(opencode.read.ok()) << messages_of(opencode);
  EXPECT_EQ(kilo.text, opencode.text);  // one code path: the same session
  EXPECT_EQ(kilo.read.repairs.at("kilo-cli-failed-commands"), 1u);
  EXPECT_EQ(kilo.read.repairs.at("kilo-cli-bookkeeping-parts"), 2u);
  EXPECT_EQ(kilo.read.repairs.at("kilo-cli-other-sessions"), 1u);
  EXPECT_EQ(kilo.read.repairs.count("opencode-failed-commands"), 0u);
  // OpenCode's reader, forced or bidding on a head that does not show the tables, reads it as Kilo's too.
  EXPECT_EQ(opencode.read.repairs.at("kilo-cli-failed-commands"), 1u);
  // A SQLite file without the tables is not Kilo's either, in Kilo's words.
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open((dir.path + "/other.db").c_str(), &db), SQLITE_OK);
    exec(db, "CREATE TABLE notes (id integer)");
    sqlite3_close(db);
  }
  const Converted other = read_file(dir.path + "/other.db", std::nullopt, kilo_cli_reader());
  ASSERT_FALSE(other.read.ok());
  EXPECT_NE(other.read.diagnostics[0].message.find("not a Kilo CLI database"), std::string::npos);
  EXPECT_NE(other.read.diagnostics[0].hint.find("~/.local/share/kilo/kilo.db"), std::string::npos);
}

}  // namespace
}  // namespace pihydrate
