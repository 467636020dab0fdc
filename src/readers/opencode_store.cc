// OpenCode's database, read from a private copy (opencode_store.h; O1 in
// docs/opencode.md).
#include "readers/opencode_store.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <new>

#include "core/files.h"
#include "pihydrate/errors.h"

namespace pihydrate {
namespace {

// Copies `from` (from its start) into a new file `to`, readable by its owner only.
void copy_file(int from, const std::string& from_name, const std::string& to) {
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out < 0) throw IoError("cannot create " + to + ": " + std::strerror(errno));
  char buffer[1 << 16];
  off_t at = 0;
  for (;;) {
    const ssize_t n = ::pread(from, buffer, sizeof buffer, at);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(out);
      throw IoError("cannot read " + from_name + ": " + std::strerror(e));
    }
    if (n == 0) break;
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(out, buffer + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        const int e = errno;
        ::close(out);
        throw IoError("cannot write " + to + ": " + std::strerror(e));
      }
      done += w;
    }
    at += n;
  }
  if (::close(out) != 0) throw IoError("cannot write " + to + ": " + std::strerror(errno));
}

// Writes `bytes` into a new file `to`, readable by its owner only.
void write_file(std::string_view bytes, const std::string& to) {
  const int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out < 0) throw IoError("cannot create " + to + ": " + std::strerror(errno));
  for (std::size_t done = 0; done < bytes.size();) {
    const ssize_t w = ::write(out, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      const int e = errno;
      ::close(out);
      throw IoError("cannot write " + to + ": " + std::strerror(e));
    }
    done += static_cast<std::size_t>(w);
  }
  if (::close(out) != 0) throw IoError("cannot write " + to + ": " + std::strerror(errno));
}

// The -wal beside `path`, opened for reading, when `path` is the file `fd` reads; else -1.
int open_wal_beside(int fd, const std::string& path) {
  if (path.empty()) return -1;
  struct stat input {
  }, named{};
  if (::fstat(fd, &input) != 0 || ::stat(path.c_str(), &named) != 0) return -1;
  if (input.st_dev != named.st_dev || input.st_ino != named.st_ino) return -1;
  return ::open((path + "-wal").c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
}

class Statement {
 public:
  Statement(const OpencodeProduct& product, sqlite3* db, const char* sql) : product_(product), db_(db) {
    if (sqlite3_prepare_v2(db, sql, -1, &stmt_, nullptr) != SQLITE_OK) fail();
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  void bind(int index, const std::string& value) {
    if (sqlite3_bind_text(stmt_, index, value.data(), static_cast<int>(value.size()), SQLITE_TRANSIENT) != SQLITE_OK)
      fail();
  }
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) fail();
    return false;
  }
  std::string text(int column) const {
    const unsigned char* t = sqlite3_column_text(stmt_, column);
    return t == nullptr ? std::string()
                        : std::string(reinterpret_cast<const char*>(t),
                                      static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
  }
  std::int64_t integer(int column) const { return sqlite3_column_int64(stmt_, column); }

 private:
  [[noreturn]] void fail() const {
    const int code = sqlite3_errcode(db_);
    std::string message = sqlite3_errmsg(db_);
    if (message.find("no such table") != std::string::npos || message.find("no such column") != std::string::npos)
      throw OpencodeStoreError{std::string("not ") + product_.a_product + " database: " + message,
                               std::string(product_.product) +
                                   " keeps its sessions in tables session, message and part of " + product_.database};
    if (code == SQLITE_NOMEM) throw std::bad_alloc();
    throw OpencodeStoreError{
        "SQLite cannot read the database: " + message,
        std::string("the file is cut short or damaged; copy ") + product_.command + ".db and its -wal again"};
  }
  const OpencodeProduct& product_;
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace

const OpencodeProduct& opencode_product() {
  static const OpencodeProduct product{
      "opencode", "OpenCode", "an OpenCode", "opencode", "~/.local/share/opencode/opencode.db", ""};
  return product;
}

const OpencodeProduct& kilo_cli_product() {
  static const OpencodeProduct product{"kilo-cli",  "Kilo CLI", "a Kilo CLI", "kilo", "~/.local/share/kilo/kilo.db",
                                       "kilo_board"};
  return product;
}

OpencodeDatabase::OpencodeDatabase(const OpencodeProduct& product, int fd, const std::string& path,
                                   std::string_view bytes)
    : product_(product) {
  // O1: the database and its -wal are copied into a folder only this process
  // writes, and opened there: SQLite may write a -shm, replay the -wal and
  // checkpoint it on close, and none of that may touch the user's files.
  std::string pattern = temp_directory() + "/pi-hydrate-opencode-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    throw IoError("cannot make a temporary folder in " + temp_directory() + ": " + std::strerror(errno));
  dir_ = pattern;
  try {
    const std::string copy = dir_ + "/opencode.db";
    if (fd < 0) {
      write_file(bytes, copy);
    } else {
      copy_file(fd, path.empty() ? "the database" : path, copy);
    }
    const int wal = fd < 0 ? -1 : open_wal_beside(fd, path);
    if (wal >= 0) {
      try {
        copy_file(wal, path + "-wal", copy + "-wal");
      } catch (...) {
        ::close(wal);
        throw;
      }
      ::close(wal);
    }
    if (sqlite3_open_v2(copy.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
      const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
      throw OpencodeStoreError{"SQLite cannot open the database: " + message, ""};
    }
    // Nothing is written, even to the copy, beyond what opening a WAL database needs.
    sqlite3_exec(db_, "PRAGMA query_only=1", nullptr, nullptr, nullptr);
    Statement check(product_, db_, "SELECT count(*) FROM session");
    check.step();
  } catch (...) {
    close();
    throw;
  }
}

OpencodeDatabase::~OpencodeDatabase() { close(); }

void OpencodeDatabase::close() {
  if (db_ != nullptr) sqlite3_close(db_);
  db_ = nullptr;
  if (dir_.empty()) return;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) ::unlink((dir_ + "/opencode.db" + suffix).c_str());
  ::rmdir(dir_.c_str());
  dir_.clear();
}

std::vector<OpencodeSessionRow> OpencodeDatabase::sessions() const {
  std::map<std::string, std::uint64_t> counts;
  {
    Statement s(product_, db_, "SELECT session_id, count(*) FROM message GROUP BY session_id");
    while (s.step()) counts[s.text(0)] = static_cast<std::uint64_t>(s.integer(1));
  }
  std::vector<OpencodeSessionRow> rows;
  Statement s(product_, db_,
              "SELECT id, parent_id, directory, title, version, revert, time_created, time_updated FROM session "
              "ORDER BY time_updated DESC, id DESC");
  while (s.step()) {
    OpencodeSessionRow row{s.text(0), s.text(1), s.text(2),    s.text(3),
                           s.text(4), s.text(5), s.integer(6), s.integer(7)};
    row.messages = counts[row.id];
    rows.push_back(std::move(row));
  }
  return rows;
}

bool OpencodeDatabase::has_table(const std::string& table) const {
  Statement s(product_, db_, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1");
  s.bind(1, table);
  return s.step();
}

void OpencodeDatabase::load(const std::string& session_id, OpencodeSession& out) const {
  std::map<std::string, std::size_t> at;
  {
    Statement s(product_, db_,
                "SELECT id, time_created, data FROM message WHERE session_id = ?1 ORDER BY time_created, id");
    s.bind(1, session_id);
    while (s.step()) {
      OpencodeMessageRow m;
      m.id = s.text(0);
      m.created = s.integer(1);
      m.data = s.text(2);
      at[m.id] = out.messages.size();
      out.messages.push_back(std::move(m));
    }
  }
  Statement s(product_, db_, "SELECT id, message_id, data FROM part WHERE session_id = ?1 ORDER BY message_id, id");
  s.bind(1, session_id);
  while (s.step()) {
    auto found = at.find(s.text(1));
    if (found == at.end()) continue;  // a part of a message that is gone: OpenCode does not read it either
    out.messages[found->second].parts.push_back({s.text(0), s.text(2)});
  }
}

}  // namespace pihydrate
