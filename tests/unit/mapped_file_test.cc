// MappedFile: released pages read back, rewritten bytes stay.
#include "pihydrate/hydrate.h"

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

// A mapped file: released pages read back the file's bytes, and a page
// holding rewritten bytes keeps them.
TEST(MappedFileTest, ReleasedPagesReadBackAndRewrittenBytesStay) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::string content(3 * page + 100, '\0');
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<char>('a' + i % 26);
  FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  ASSERT_EQ(std::fwrite(content.data(), 1, content.size(), file), content.size());
  std::fflush(file);
  auto mapped = MappedFile::map(fileno(file));
  ASSERT_NE(mapped, nullptr);
  ASSERT_EQ(mapped->size(), content.size());
  mapped->data()[page + 10] = '#';
  mapped->rewritten(page + 10, page + 11);
  mapped->data()[2 * page + 5] = '!';  // not reported: may be lost on release
  mapped->release_before(mapped->size());
  std::string expected = content;
  expected[page + 10] = '#';
  EXPECT_EQ(std::string(mapped->data(), mapped->size()), expected);

  // A range lets go of the whole pages inside it only: the page it starts
  // in keeps an unreported edit, one wholly inside loses it, and a page
  // holding reported bytes keeps them.
  mapped->data()[10] = '<';            // page 0: the range starts inside it
  mapped->data()[2 * page + 5] = '>';  // page 2: wholly inside, not reported
  mapped->release_range(1, 3 * page);
  expected[10] = '<';
  EXPECT_EQ(std::string(mapped->data(), mapped->size()), expected);
  mapped->release_range(0, mapped->size());
  expected[10] = content[10];
  EXPECT_EQ(std::string(mapped->data(), mapped->size()), expected);
  mapped.reset();
  std::fclose(file);
  EXPECT_EQ(MappedFile::map(-1), nullptr);  // not a file: the caller reads instead
}

}  // namespace
}  // namespace pihydrate
