// The spool: where a thread export's converted session waits between the
// converter and hydrate_session. Most of its bytes are message bodies copied
// unchanged from the export (tool output, thinking, images). Those runs are
// "borrowed": named by their place in the export instead of being written a
// second time, and read from the export when the session's lines are read
// back. The spool file holds only the rest (a few percent of the session),
// so a big conversion neither writes nor reads the session through the page
// cache once more.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pihydrate {

class LineSource;

// Bytes of a block, or of the session, that are the export's bytes at
// `export_offset`.
struct BorrowedRun {
  std::uint64_t at = 0;  // offset in the block (SpoolBlock) or in the session (SpoolLayout)
  std::uint64_t export_offset = 0;
  std::uint64_t length = 0;
};

// A block of converted lines handed from the converter to the spool.
struct SpoolBlock {
  std::string bytes;                  // whole lines, '\n'-terminated, borrowed runs included
  std::vector<BorrowedRun> borrowed;  // runs of `bytes`, in order, not overlapping
  void clear() {
    bytes.clear();
    borrowed.clear();
  }
};

// Where the bytes of the whole converted session are: the borrowed runs at
// their session offsets, and between them the stored bytes, one after
// another in the spool file.
class SpoolLayout {
 public:
  // The next block, which follows the ones before in the session.
  void add_block(const SpoolBlock& block);
  std::uint64_t session_size() const { return session_size_; }
  std::uint64_t stored_size() const { return session_size_ - borrowed_size_; }
  std::size_t run_count() const { return runs_.size(); }
  // Whether session byte `at` is borrowed; if so, where it is in the export
  // and how many bytes of its run are left from it on.
  bool borrowed_at(std::uint64_t at, std::uint64_t& export_offset, std::uint64_t& left) const;
  // The session bytes [offset, offset + length), read from the spool file
  // and the export, into `scratch`. Throws IoError, and InputShrankError
  // when either file ends too soon.
  std::string_view read(int spool_fd, int export_fd, const std::string& name, std::uint64_t offset,
                        std::uint64_t length, std::string& scratch) const;

 private:
  struct Run {
    BorrowedRun run;
    std::uint64_t borrowed_before = 0;  // bytes of the runs before this one
  };
  std::size_t first_ending_after(std::uint64_t at) const;  // the first run with bytes past `at`
  // Where session byte `at` is in the spool file. Not for a byte inside a
  // borrowed run: for one, where the next stored byte is.
  std::uint64_t stored_offset(std::uint64_t at) const;
  std::vector<Run> runs_;
  std::uint64_t session_size_ = 0;
  std::uint64_t borrowed_size_ = 0;
};

// Reads the converted session's lines back for hydrate_session: stored
// bytes from `spool_fd`, borrowed runs from `export_fd` (the export must not
// change meanwhile; the caller checks that it did not). Neither fd is owned.
std::unique_ptr<LineSource> make_spool_line_source(int spool_fd, int export_fd, SpoolLayout layout, std::string name);

}  // namespace pihydrate
