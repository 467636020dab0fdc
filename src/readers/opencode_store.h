// OpenCode's storage, read without changing it: its SQLite database
// (~/.local/share/opencode/opencode.db, WAL mode) and the JSON `opencode
// export` prints. Both give one session as rows: the session, its messages
// and their parts, each part's and message's `data` JSON as OpenCode stored
// it. docs/opencode.md has the rules (O1: why a private copy). Kilo CLI, a
// fork of OpenCode, stores its sessions the same way under its own names
// (KL1-KL3): an OpencodeProduct says which of the two is read.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;

namespace pihydrate {

// What tells OpenCode from a fork that stores sessions as it does (docs/opencode.md, KL1-KL3): the
// names its reader, messages and counters use, and the table only the fork's database has.
struct OpencodeProduct {
  const char* name;          // the reader's name ("opencode", "kilo-cli"), which starts its counters' names
  const char* product;       // "OpenCode", "Kilo CLI": in messages
  const char* a_product;     // "an OpenCode", "a Kilo CLI"
  const char* command;       // "opencode", "kilo": in hints ("`opencode export SESSION_ID`")
  const char* database;      // where it keeps the database: "~/.local/share/opencode/opencode.db"
  const char* marker_table;  // KL1: a table only its database has; "" for OpenCode, which has none of its own
};
const OpencodeProduct& opencode_product();
const OpencodeProduct& kilo_cli_product();

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
  // is not a database of `product` that SQLite can read, IoError when the
  // copy cannot be made.
  OpencodeDatabase(const OpencodeProduct& product, int fd, const std::string& path, std::string_view bytes = {});
  ~OpencodeDatabase();
  OpencodeDatabase(const OpencodeDatabase&) = delete;
  OpencodeDatabase& operator=(const OpencodeDatabase&) = delete;

  // Every session, the most recently updated first.
  std::vector<OpencodeSessionRow> sessions() const;
  // KL1: whether the database holds `table`.
  bool has_table(const std::string& table) const;
  // One session with its messages and parts.
  void load(const std::string& session_id, OpencodeSession& out) const;

 private:
  void close();  // the database, then its copy
  const OpencodeProduct& product_;
  std::string dir_;  // the private copy's folder
  ::sqlite3* db_ = nullptr;
};

struct OpencodeStoreError {
  std::string message, hint;
};

}  // namespace pihydrate
