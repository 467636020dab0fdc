// Files a job needs besides its input and output: unlinked temporary files
// (a spooled stream, a converted thread), reading a file whole, and the
// directories made for the output, removed again when nothing is written.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <boost/filesystem/path.hpp>
#include <boost/system/error_code.hpp>

namespace pihydrate {

// $TMPDIR, or /tmp.
std::string temp_directory();

// An unlinked temporary file in temp_directory(): nothing is left behind,
// whatever happens to the process. `what` names it in the IoError thrown.
int make_unlinked_temp(const std::string& what);

// Copies `in` to an unlinked temporary file and rewinds it (a stream is read twice).
int spool_stream(std::istream& in, const std::string& name);

// The rest of `fd`, read whole (an export that cannot be mapped).
std::string read_all(int fd, const std::string& name);

// Owns a file descriptor.
struct Fd {
  int fd = -1;
  Fd() = default;
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd();
};

// Directories made for the output are removed again, if still empty, when
// nothing is written: a failed run leaves the tree as it was.
class CreatedDirectories {
 public:
  CreatedDirectories() = default;
  CreatedDirectories(const CreatedDirectories&) = delete;
  CreatedDirectories& operator=(const CreatedDirectories&) = delete;
  // Creates `dir` and its missing parents; false with `ec` set on failure.
  bool create(const boost::filesystem::path& dir, boost::system::error_code& ec);
  void keep() { created_.clear(); }
  const std::vector<boost::filesystem::path>& created() const { return created_; }  // deepest first
  ~CreatedDirectories();

 private:
  std::vector<boost::filesystem::path> created_;
};

}  // namespace pihydrate
