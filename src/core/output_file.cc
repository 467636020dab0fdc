// Atomic output through a temporary file (output_file.h), and the opt-in
// signal handlers that remove it.
#include "pihydrate/output_file.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "pihydrate/errors.h"

namespace pihydrate {
namespace {

// The temporary file a signal must remove: only an OutputFile made with
// `remove_on_signals` names it here. One such output at a time per process.
char g_pending_temp[4096];

extern "C" void remove_temp_and_reraise(int sig) {
  if (g_pending_temp[0]) ::unlink(g_pending_temp);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

void set_pending(const std::string& path) {
  if (path.size() < sizeof g_pending_temp) {
    std::memcpy(g_pending_temp, path.c_str(), path.size() + 1);
  }
  struct sigaction sa {};
  sa.sa_handler = remove_temp_and_reraise;
  sigemptyset(&sa.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    // A signal the caller ignores (nohup, trap '' INT) stays ignored.
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(sig, &sa, nullptr);
  }
  // A closed pipe on `-o -` must become a write error (and cleanup), not a
  // silent death that leaves the temporary file behind.
  ::signal(SIGPIPE, SIG_IGN);
}

void clear_pending() { g_pending_temp[0] = '\0'; }

std::string errno_text() { return std::strerror(errno); }

bool on_tmpfs(int fd) {
  struct statfs fs {};
  return ::fstatfs(fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC;
}

}  // namespace

void write_all(int fd, const char* data, std::size_t size, const std::string& name) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError("cannot write " + name + ": " + errno_text());
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

void pread_all(int fd, char* out, std::uint64_t size, std::uint64_t offset, const std::string& name) {
  std::uint64_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd, out + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError("cannot read " + name + ": " + errno_text());
    if (n == 0) throw InputShrankError("cannot read " + name + ": it shrank");
    done += static_cast<std::uint64_t>(n);
  }
}

OutputFile::OutputFile(const std::string& directory, bool remove_on_signals)
    : directory_(directory.empty() ? "." : directory), remove_on_signals_(remove_on_signals) {
  std::string pattern = directory_ + "/.pi-hydrate-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  if (!remove_on_signals_) {
    fd_ = ::mkstemp(buf.data());  // mode 0600
    if (fd_ < 0) throw IoError("cannot create a temporary file in " + directory_ + ": " + errno_text());
    temp_path_ = buf.data();
    return;
  }
  // A signal between creating the file and arming its removal would leave
  // the file behind: the signals are held until both are done (for this
  // thread; the CLI has no other one then), and one that came meanwhile
  // is handled, removing the file, once they are let through.
  sigset_t held, before;
  sigemptyset(&held);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&held, sig);
  ::pthread_sigmask(SIG_BLOCK, &held, &before);
  fd_ = ::mkstemp(buf.data());  // mode 0600
  const int mkstemp_errno = errno;
  if (fd_ >= 0) {
    temp_path_ = buf.data();
    set_pending(temp_path_);
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (fd_ < 0) throw IoError("cannot create a temporary file in " + directory_ + ": " + std::strerror(mkstemp_errno));
}

OutputFile::~OutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!done_ && !temp_path_.empty()) ::unlink(temp_path_.c_str());
  if (remove_on_signals_) clear_pending();
}

void OutputFile::write_line(std::string_view line) {
  buffer_.append(line.data(), line.size());
  buffer_ += '\n';
  if (buffer_.size() >= kBufferBytes) flush();
}

void OutputFile::write_lines(std::string_view lines) {
  // A big block goes out as it is, without a copy into the buffer first.
  if (buffer_.size() + lines.size() < kBufferBytes) {
    buffer_.append(lines.data(), lines.size());
    return;
  }
  flush();
  write_all(fd_, lines.data(), lines.size(), temp_path_);
  written_ += lines.size();
  start_writeback();
}

void OutputFile::flush() {
  write_all(fd_, buffer_.data(), buffer_.size(), temp_path_);
  written_ += buffer_.size();
  buffer_.clear();
  start_writeback();
}

void OutputFile::start_writeback() {
  // Start writing back what is written so far, without waiting for it: the
  // disk works while the rest is produced, and the fsync at the end has only
  // the tail left to wait for. Only a hint; errors surface at the fsync.
  if (written_ - writeback_started_ >= kWritebackStep) {
    ::sync_file_range(fd_, static_cast<off_t>(writeback_started_), static_cast<off_t>(written_ - writeback_started_),
                      SYNC_FILE_RANGE_WRITE);
    writeback_started_ = written_;
  }
}

void OutputFile::expect_bytes(std::uint64_t bytes) {
  // Blocks reserved before the writes reach them make each write cheaper
  // in the kernel: ext4 no longer reserves and maps them a page at a time.
  // The file's size does not change; a file system that cannot, or a disk
  // too full, leaves it to the writes, which report what goes wrong.
  // tmpfs has no blocks to map: reserving there allocates and zeroes every
  // page before the writes fill it, which costs more than it saves, on the
  // thread that renders.
  if (bytes == 0 || on_tmpfs(fd_)) return;
  if (::fallocate(fd_, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(written_ + buffer_.size()), static_cast<off_t>(bytes)) ==
          0 ||
      errno == ENOSPC)  // a partial reservation may remain
    reserved_ = true;
}

void OutputFile::finish() {
  if (finished_) return;
  flush();
  // Blocks reserved past the end are given back (a truncation to the same size).
  if (reserved_ && ::ftruncate(fd_, static_cast<off_t>(written_)) != 0)
    throw IoError("cannot truncate " + temp_path_ + ": " + errno_text());
  if (::fsync(fd_) != 0) throw IoError("cannot sync " + temp_path_ + ": " + errno_text());
  finished_ = true;
}

void OutputFile::commit(const std::string& target, bool overwrite) {
  finish();
  if (!overwrite) {
    // link() fails if the target exists, so no race can overwrite a file.
    if (::link(temp_path_.c_str(), target.c_str()) != 0) {
      if (errno == EEXIST) throw IoError(target + " exists; pass --force to replace it");
      throw IoError("cannot create " + target + ": " + errno_text());
    }
    ::unlink(temp_path_.c_str());
  } else if (::rename(temp_path_.c_str(), target.c_str()) != 0) {
    throw IoError("cannot rename " + temp_path_ + " to " + target + ": " + errno_text());
  }
  done_ = true;
  if (remove_on_signals_) clear_pending();
  int dir = ::open(directory_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void OutputFile::copy_to(LineSink& sink) {
  // Read back from the page cache: the file is flushed, not synced (it is
  // removed once copied, so its durability does not matter).
  flush();
  if (::lseek(fd_, 0, SEEK_SET) < 0) throw IoError("cannot rewind " + temp_path_ + ": " + errno_text());
  std::string chunk;
  std::size_t kept = 0;  // bytes of a line begun in the chunk before
  for (;;) {
    chunk.resize(kept + (std::size_t{1} << 20));
    ssize_t n = ::read(fd_, chunk.data() + kept, chunk.size() - kept);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw IoError("cannot read " + temp_path_ + ": " + errno_text());
    chunk.resize(kept + static_cast<std::size_t>(n));
    if (n == 0) break;
    const std::size_t end = chunk.rfind('\n') + 1;  // 0 when no line ends in it
    if (end > 0) sink.write_lines(std::string_view(chunk).substr(0, end));
    chunk.erase(0, end);
    kept = chunk.size();
  }
  if (!chunk.empty()) sink.write_line(chunk);  // never: every written line ends with '\n'
}

void OutputFile::copy_to(std::ostream& out) {
  finish();
  StreamSink sink(out);
  copy_to(sink);
  out.flush();
  if (!out) throw IoError("cannot write to standard output");
}

void StreamSink::write_line(std::string_view line) {
  out_.write(line.data(), static_cast<std::streamsize>(line.size()));
  out_.put('\n');
}

void StreamSink::write_lines(std::string_view lines) {
  out_.write(lines.data(), static_cast<std::streamsize>(lines.size()));
}

void check_output_target(const std::string& target, const std::string& input_path, bool overwrite) {
  struct stat target_st {};
  if (::lstat(target.c_str(), &target_st) != 0) return;  // does not exist: fine
  if (S_ISLNK(target_st.st_mode)) throw IoError("refusing to write through the symlink " + target);
  // The output is renamed into place: a device (-o /dev/null run as root), a
  // FIFO or a socket would be replaced by a regular file.
  if (S_ISDIR(target_st.st_mode)) throw IoError(target + " is a directory (use --session-dir to write into it)");
  if (!S_ISREG(target_st.st_mode))
    throw IoError("refusing to replace " + target +
                  ", which is not a regular file (a device, FIFO or socket); use -o - and redirect standard output");
  struct stat input_st {};
  if (!input_path.empty() && input_path != "-" && ::stat(input_path.c_str(), &input_st) == 0 &&
      input_st.st_dev == target_st.st_dev && input_st.st_ino == target_st.st_ino)
    throw IoError("refusing to overwrite the input " + input_path + " with its own hydration");
  if (!overwrite) throw IoError(target + " exists; pass --force to replace it");
}

}  // namespace pihydrate
