// OutputFile: lines and blocks in order, reserved blocks given back, the size what was written.
#include "pihydrate/hydrate.h"

#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <random>
#include <set>

#include "common/index_summary.h"
#include "core/json_spans.h"
#include "core/mapped_file.h"
#include "hydrate/plan.h"
#include "pihydrate/errors.h"
#include "pihydrate/output_file.h"
#include "pihydrate/spool.h"
#include "pihydrate/validator.h"
#include "readers/page_window.h"
#include "readers/thread_document.h"
#include "readers/thread_export.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>
#include <sys/stat.h>

#include <atomic>
#include <sstream>

namespace pihydrate {
namespace {

// Lines reach the output one at a time or in blocks; a block that does not
// fit the 1 MiB buffer is written as it is, after what the buffer holds. The
// file has every byte in order either way.
TEST(OutputFileTest, LinesAndBlocksOfAnySizeArriveInOrder) {
  const std::string dir = ::testing::TempDir();
  std::string expected;
  std::ostringstream copied;
  {
    OutputFile output(dir);
    const std::string big_line(300 << 10, 'b');
    std::string block;
    for (int i = 0; i < 5; ++i) block += big_line + "\n";  // 1.5 MiB: past the buffer
    output.write_line("first");
    expected += "first\n";
    output.write_lines("two\nlines\n");
    expected += "two\nlines\n";
    output.write_lines(block);
    expected += block;
    output.write_line("after the block");
    expected += "after the block\n";
    output.write_lines(block);
    expected += block;
    output.finish();
    output.copy_to(copied);
  }
  EXPECT_TRUE(copied.str() == expected) << copied.str().size() << " bytes, expected " << expected.size();
}

// Blocks reserved ahead (expect_bytes) are reserved past the end: the file
// keeps its size while it is written (verification reads it then), writes
// past the reservation go on as usual, and finish() gives back what was not
// written, in both directions of a wrong guess.
TEST(OutputFileTest, ReservedBlocksAreGivenBackAndTheSizeIsWhatWasWritten) {
  const std::string dir = ::testing::TempDir();
  for (const std::uint64_t guess : {std::uint64_t{8} << 20, std::uint64_t{1} << 10}) {
    std::ostringstream copied;
    const std::string line(100 << 10, 'r');  // ten of them: about 1 MiB
    std::string expected;
    OutputFile output(dir);
    output.write_line("header");
    expected += "header\n";
    output.expect_bytes(guess);
    struct stat st {};
    for (int i = 0; i < 10; ++i) {
      output.write_lines(line + "\n");
      expected += line + "\n";
    }
    output.flush();
    ASSERT_EQ(::fstat(output.fd(), &st), 0);
    EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), expected.size()) << "the size is what was written";
    if (guess > expected.size() && st.st_blocks * 512 < static_cast<off_t>(guess)) {
      GTEST_SKIP() << "this file system does not reserve blocks past the end";
    }
    output.finish();
    ASSERT_EQ(::fstat(output.fd(), &st), 0);
    EXPECT_EQ(static_cast<std::uint64_t>(st.st_size), expected.size());
    EXPECT_LT(static_cast<std::uint64_t>(st.st_blocks) * 512, expected.size() + (64 << 10)) << "guess " << guess;
    output.copy_to(copied);
    EXPECT_TRUE(copied.str() == expected);
  }
}

// On tmpfs nothing is reserved: there a reservation allocates and zeroes
// every page before the writes fill it, which costs more than it saves.
TEST(OutputFileTest, NothingIsReservedOnTmpfs) {
  struct statfs fs {};
  if (::statfs("/dev/shm", &fs) != 0 || fs.f_type != TMPFS_MAGIC) GTEST_SKIP() << "/dev/shm is not a tmpfs here";
  OutputFile output("/dev/shm");
  output.write_line("header");
  output.expect_bytes(std::uint64_t{8} << 20);
  output.flush();
  struct stat st {};
  ASSERT_EQ(::fstat(output.fd(), &st), 0);
  EXPECT_LT(static_cast<std::uint64_t>(st.st_blocks) * 512, std::uint64_t{1} << 20) << "blocks were reserved";
}

}  // namespace
}  // namespace pihydrate
