// OpenCode's storage, read without changing it: its SQLite database
// (~/.local/share/opencode/opencode.db, WAL mode) and the JSON `opencode
// export` prints. Both give one session as rows: the session, its messages
// and their parts, each part's and message's `data` JSON as OpenCode stored
// it. docs/opencode.md has the rules (O1: why a private copy).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;

namespace pihydrate {

struct OpencodeSessionRow {
  std::string id, parent_id, directory, title, version, revert;  // revert: the JSON, or ""
  std::int64_t created = 0, updated = 0;                         // epoch milliseconds
  std::uint64_t messages = 0;                                    // how many messages it holds
};

struct OpencodePartRow {
  std::string id, data;
};

struct OpencodeMessageRow {
  std::string id, data;
  std::int64_t created = 0;
  std::vector<OpencodePartRow> parts;  // in id order (OpenCode's own order)
};

struct OpencodeSession {
  OpencodeSessionRow info;
  std::vector<OpencodeMessageRow> messages;  // by time_created, then id (OpenCode's order)
  std::vector<OpencodeSessionRow> others;    // every other session of the database (none for an export)
};

// An OpenCode database, copied (with its -wal) into a private temporary
// folder and opened there; the copy is removed when this is destroyed.
class OpencodeDatabase {
 public:
  // `fd` is the database file (read from its start), or -1 for `bytes`;
  // `path` names it on disk ("" for a stream): its "-wal" beside it is read
  // when it exists and `fd` is that file. Throws OpencodeStoreError when it
  // is not an OpenCode database that SQLite can read, IoError when the copy
  // cannot be made.
  OpencodeDatabase(int fd, const std::string& path, std::string_view bytes = {});
  ~OpencodeDatabase();
  OpencodeDatabase(const OpencodeDatabase&) = delete;
  OpencodeDatabase& operator=(const OpencodeDatabase&) = delete;

  // Every session, the most recently updated first.
  std::vector<OpencodeSessionRow> sessions() const;
  // One session with its messages and parts.
  void load(const std::string& session_id, OpencodeSession& out) const;

 private:
  void close();      // the database, then its copy
  std::string dir_;  // the private copy's folder
  ::sqlite3* db_ = nullptr;
};

struct OpencodeStoreError {
  std::string message, hint;
};

}  // namespace pihydrate
