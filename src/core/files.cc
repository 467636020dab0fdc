// Temporary files, whole reads and created directories (files.h).
#include "core/files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <istream>

#include <boost/filesystem/operations.hpp>

#include "pihydrate/errors.h"

namespace pihydrate {

namespace fs = boost::filesystem;

std::string temp_directory() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

int make_unlinked_temp(const std::string& what) {
  std::string path = temp_directory() + "/pi-hydrate-spool-XXXXXX";
  int fd = ::mkstemp(path.data());
  if (fd < 0) throw IoError("cannot create a temporary file for " + what + ": " + std::strerror(errno));
  ::unlink(path.c_str());
  return fd;
}

int spool_stream(std::istream& in, const std::string& name) {
  Fd spool;
  spool.fd = make_unlinked_temp(name);
  std::vector<char> chunk(1 << 20);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    const char* p = chunk.data();
    std::size_t left = static_cast<std::size_t>(in.gcount());
    while (left > 0) {
      ssize_t n = ::write(spool.fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw IoError("cannot spool " + name + ": " + std::strerror(errno));
      p += n;
      left -= static_cast<std::size_t>(n);
    }
  }
  if (::lseek(spool.fd, 0, SEEK_SET) < 0)
    throw IoError(std::string("cannot rewind spooled input: ") + std::strerror(errno));
  const int fd = spool.fd;
  spool.fd = -1;
  return fd;
}

std::string read_all(int fd, const std::string& name) {
  std::string bytes;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) bytes.reserve(static_cast<std::size_t>(st.st_size) + 1);
  std::vector<char> chunk(1 << 20);
  for (;;) {
    ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError("cannot read " + name + ": " + std::strerror(errno));
    if (n == 0) break;
    bytes.append(chunk.data(), static_cast<std::size_t>(n));
  }
  return bytes;
}

Fd::~Fd() {
  if (fd >= 0) ::close(fd);
}

bool CreatedDirectories::create(const fs::path& dir, boost::system::error_code& ec) {
  fs::path missing = dir;
  std::vector<fs::path> chain;
  while (!missing.empty() && !fs::exists(missing, ec)) {
    chain.push_back(missing);
    missing = missing.parent_path();
  }
  fs::create_directories(dir, ec);
  if (!ec) created_ = std::move(chain);  // deepest first
  return !ec;
}

CreatedDirectories::~CreatedDirectories() {
  boost::system::error_code ignored;
  for (const fs::path& dir : created_)
    if (fs::is_empty(dir, ignored)) fs::remove(dir, ignored);
}

}  // namespace pihydrate
