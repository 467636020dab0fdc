// The thread spool: blocks of whole lines, runs borrowed from the export, read back and indexed as the session; carried
// strings.
#include "core/spool_indexer.h"
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

std::string read_golden_input(const std::string& name) {
  std::ifstream in(std::string(PIHYDRATE_SOURCE_DIR) + "/tests/golden/thread/" + name, std::ios::binary);
  EXPECT_TRUE(in) << name;
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// What every block handed to the spool must be: whole lines, and borrowed
// runs in order, inside the block, at least `min_run` long, each the
// export's bytes at its offset.
void expect_sound_block(const SpoolBlock& block, const std::string& original, std::size_t min_run,
                        const std::string& context) {
  ASSERT_FALSE(block.bytes.empty()) << context;
  EXPECT_EQ(block.bytes.back(), '\n') << context << ": a block ends with a whole line";
  std::uint64_t after_last = 0;
  for (const BorrowedRun& run : block.borrowed) {
    EXPECT_GE(run.at, after_last) << context;
    EXPECT_GE(run.length, min_run) << context;
    ASSERT_LE(run.at + run.length, block.bytes.size()) << context;
    EXPECT_EQ(block.bytes.substr(run.at, run.length), original.substr(run.export_offset, run.length)) << context;
    after_last = run.at + run.length;
  }
}

// A thread converted twice: in memory, and through a spool whose blocks
// `check` sees (with their index) before they are gathered into `written`.
struct TwoConversions {
  ConvertedThread memory, spooled;
  std::string written;  // the spool's blocks, one after another
  std::size_t blocks = 0;
};
TwoConversions convert_in_memory_and_spooled(const std::string& original, ThreadOptions options,
                                             const std::function<void(const SpoolBlock&, std::size_t)>& check) {
  TwoConversions out;
  std::string bytes = original;  // the converter may rewrite its input
  out.memory = convert_thread_export(bytes, "t.json", ThreadOptions{});
  options.spool = [&](SpoolBlock& block) {
    check(block, out.blocks++);
    out.written += block.bytes;
    block.clear();
  };
  bytes = original;
  out.spooled = convert_thread_export(bytes, "t.json", options);
  return out;
}

// hydrate streams a converted thread to a temporary file; the bytes there
// must be exactly the in-memory conversion's. Runs a line copies unchanged
// from a compact export are borrowed (named by their place in the export,
// not stored again); none are from a pretty-printed one, whose lines are
// compacted, or once a lone surrogate was rewritten.
TEST(ThreadSpoolTest, SpooledSessionEqualsTheInMemoryOne) {
  struct Case {
    std::string name, bytes;
    bool borrows;
  };
  std::vector<Case> cases = {{"example", read_golden_input("example/input.json"), false},
                             {"jsonl-variant", read_golden_input("jsonl-variant/input.jsonl"), false},
                             {"escaped-surrogates", "", false},
                             {"compact example", "", true},
                             {"compact jsonl-variant", "", true}};
  append_compact_json(cases[2].bytes, read_golden_input("escaped-surrogates/input.json"));
  append_compact_json(cases[3].bytes, cases[0].bytes);
  std::istringstream jsonl(cases[1].bytes);
  for (std::string line; std::getline(jsonl, line);) {
    append_compact_json(cases[4].bytes, line);
    cases[4].bytes += '\n';
  }
  for (const Case& c : cases) {
    ThreadOptions options;
    std::size_t borrowed = 0;
    options.borrow_from_export = true;
    options.min_borrowed_run = 16;  // the examples' messages are short
    const TwoConversions t = convert_in_memory_and_spooled(c.bytes, options, [&](const SpoolBlock& block, std::size_t) {
      expect_sound_block(block, c.bytes, 16, c.name);
      borrowed += block.borrowed.size();
    });
    ASSERT_TRUE(t.memory.ok()) << c.name;
    ASSERT_FALSE(t.memory.session.empty());
    EXPECT_EQ(t.memory.session_bytes, t.memory.session.size());
    ASSERT_TRUE(t.spooled.ok());
    EXPECT_TRUE(t.spooled.session.empty());
    EXPECT_GE(t.blocks, 1u);
    EXPECT_EQ(t.spooled.session_bytes, t.written.size());
    EXPECT_EQ(t.written, t.memory.session) << c.name;
    EXPECT_EQ(t.spooled.origins.size(), t.memory.origins.size());
    if (c.borrows)
      EXPECT_GE(borrowed, 2u) << c.name;
    else
      EXPECT_EQ(borrowed, 0u) << c.name;
  }
}

// The converter writes a compact message straight into the spool's block
// and hands the block over first when the line might not fit. Wherever a
// line falls against the MiB (just inside, at, just past it, or bigger than
// a block), and whatever its edits insert (a string content wrapped, a
// missing usage and timestamp filled in), every block holds whole lines,
// stays within the MiB unless it is one line, borrows only the export's
// bytes, and the blocks together are the in-memory session.
TEST(ThreadSpoolTest, BlocksHoldWholeLinesWhereverALineMeetsTheMiB) {
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  auto entry = [](int n, const std::string& kind, const std::string& message) {
    return "{\"id\":\"e" + std::to_string(n) + "\",\"kind\":\"" + kind + "\",\"ts\":\"2026-11-20T14:02:1" +
           std::to_string(n % 10) + ".000Z\",\"data\":{\"message\":" + message + "}}";
  };
  auto result = [](int n, const std::string& content) {
    return "{\"role\":\"toolResult\",\"toolCallId\":\"c" + std::to_string(n) +
           "\",\"toolName\":\"read\",\"content\":" + content + ",\"isError\":false,\"timestamp\":1}";
  };
  auto text_block = [](std::size_t size) {
    return "[{\"type\":\"text\",\"text\":\"" + std::string(size, 'x') + "\"}]";
  };
  int cases = 0, split_before_a_line = 0, single_line_blocks = 0;
  // The first result fills the block to within `gap` bytes of the MiB; the
  // next line then ends just inside it, at it, or past it.
  for (std::size_t gap : {0u, 1u, 2u, 40u, 100u, 200u, 300u, 5000u}) {
    for (int next : {0, 1, 2, 3}) {
      const std::size_t first_text = kMiB - 400 - gap;
      std::vector<std::string> entries;
      entries.push_back(
          entry(1, "pi.assistant",
                "{\"role\":\"assistant\",\"content\":[{\"type\":\"toolCall\",\"id\":\"c1\",\"name\":\"read\","
                "\"arguments\":{}},{\"type\":\"toolCall\",\"id\":\"c2\",\"name\":\"read\",\"arguments\":{}}],"
                "\"usage\":{\"input\":1,\"cost\":{\"total\":0}},\"stopReason\":\"toolUse\",\"timestamp\":1}"));
      entries.push_back(entry(2, "pi.tool_result", result(1, text_block(first_text))));
      const std::string second =
          next == 0   ? result(2, text_block(150))                      // small, compact
          : next == 1 ? result(2, "\"" + std::string(180, 'y') + "\"")  // string content: wrapped
          : next == 2
              ? result(2, text_block(kMiB + 3000))  // bigger than a block
              : "{\"role\":\"toolResult\",\"toolCallId\":\"c2\",\"toolName\":\"read\",\"content\":" + text_block(120) +
                    "}";  // no timestamp: one is inserted
      entries.push_back(entry(3, "pi.tool_result", second));
      std::string original =
          "{\"format\":\"thread-export\",\"version\":1,\"thread\":{\"id\":\"t\",\"createdAt\":"
          "\"2026-11-20T14:02:11.204Z\"},\"entries\":[";
      for (std::size_t k = 0; k < entries.size(); ++k) original += (k ? "," : "") + entries[k];
      original += "]}";

      ThreadOptions options;
      options.borrow_from_export = true;
      const std::string context = "gap " + std::to_string(gap) + ", next line " + std::to_string(next);
      const TwoConversions t =
          convert_in_memory_and_spooled(original, options, [&](const SpoolBlock& block, std::size_t index) {
            expect_sound_block(block, original, options.min_borrowed_run, context);
            const auto lines = std::count(block.bytes.begin(), block.bytes.end(), '\n');
            if (lines == 1 && block.bytes.size() > kMiB)
              ++single_line_blocks;
            else
              EXPECT_LE(block.bytes.size(), kMiB) << context << ": only a line on its own may pass the MiB";
            if (index > 0) ++split_before_a_line;
          });
      ASSERT_TRUE(t.memory.ok()) << context;
      ASSERT_TRUE(t.spooled.ok());
      EXPECT_EQ(t.written, t.memory.session) << context;
      EXPECT_EQ(t.spooled.session_bytes, t.written.size());
      ++cases;
    }
  }
  EXPECT_EQ(cases, 32);
  EXPECT_GT(split_before_a_line, 20);  // most cases needed a second block
  EXPECT_GE(single_line_blocks, 8);    // every case of a line bigger than a block
}

// An export of random letters in a temporary file, and an empty spool file.
struct SpoolTestFiles {
  SpoolTestFiles(std::size_t export_size, std::mt19937& rng) : exported(export_size, ' ') {
    for (char& c : exported) c = static_cast<char>('a' + rng() % 26);
    export_file = std::tmpfile();
    spool_file = std::tmpfile();
    written =
        export_file && spool_file &&
        ::pwrite(fileno(export_file), exported.data(), exported.size(), 0) == static_cast<ssize_t>(exported.size());
  }
  ~SpoolTestFiles() {
    if (export_file) std::fclose(export_file);
    if (spool_file) std::fclose(spool_file);
  }
  std::string exported;
  FILE* export_file = nullptr;
  FILE* spool_file = nullptr;
  bool written = false;
};

// Borrowed runs that follow each other in the export, as a conversion's
// do, are read a group at a time (one preadv, the bytes between them into
// scratch): small gaps, gaps too big to read through, groups longer than
// one call takes, and a run that goes back in the export all read back
// the session's bytes.
TEST(ThreadSpoolTest, RunsInExportOrderReadBackWhateverTheirGaps) {
  std::mt19937 rng(5);
  SpoolTestFiles files(4 << 20, rng);
  ASSERT_TRUE(files.written);
  const std::string& exported = files.exported;
  std::string session;
  SpoolLayout layout;
  {
    SpoolIndexer indexer(fileno(files.spool_file), "spool");
    std::size_t from = 0;
    for (int b = 0; b < 8; ++b) {
      SpoolBlock block;
      for (int line = 0; line < 400; ++line) {
        block.bytes += "{\"type\":\"custom\",\"data\":\"";
        const std::size_t length = 1 + rng() % 300;
        const std::uint32_t pick = b < 5 ? 10 : rng() % 100;  // the first 2000 runs in one group, as far as a call goes
        from += pick < 2 ? (100 << 10) : pick < 4 ? 0 : rng() % 400;  // a big gap, none, or a small one
        if (pick == 50) from = rng() % (from + 1);                    // back in the export
        if (from + length > exported.size()) from = 0;
        block.borrowed.push_back({block.bytes.size(), from, length});
        block.bytes.append(exported, from, length);
        from += length;
        block.bytes += "\"}\n";
      }
      session += block.bytes;
      indexer.append(block);
    }
    indexer.finish();
    layout = indexer.take_layout();
  }
  EXPECT_EQ(layout.run_count(), 3200u);
  auto source = make_spool_line_source(fileno(files.spool_file), fileno(files.export_file), std::move(layout), "spool");
  std::string scratch;
  EXPECT_TRUE(source->read(0, session.size(), scratch) == session) << "all 3200 runs at once";
  for (int i = 0; i < 200; ++i) {
    const std::uint64_t offset = rng() % session.size();
    const std::uint64_t length = rng() % (session.size() - offset + 1);
    ASSERT_TRUE(source->read(offset, length, scratch) == std::string_view(session).substr(offset, length))
        << offset << " " << length;
  }
}

// The session as SpoolIndexer stores it (the bytes between borrowed runs)
// and reads it back through its layout: any range, wherever it starts and
// ends (in a run, between runs, across blocks), is the session's bytes.
TEST(ThreadSpoolTest, ALayoutReadsBackAnyRangeOfTheSession) {
  std::mt19937 rng(3);
  SpoolTestFiles files(1 << 16, rng);
  ASSERT_TRUE(files.written);
  const std::string& exported = files.exported;
  FILE* const export_file = files.export_file;
  FILE* const spool_file = files.spool_file;
  std::string session;
  SpoolLayout layout;
  std::uint64_t stored = 0;
  {
    SpoolIndexer indexer(fileno(spool_file), "spool");
    for (int b = 0; b < 40; ++b) {
      SpoolBlock block;
      for (int line = 0; line < 1 + static_cast<int>(rng() % 4); ++line) {
        block.bytes += "{\"type\":\"custom\",\"data\":\"";
        for (int piece = 0; piece < static_cast<int>(rng() % 4); ++piece) {
          const std::size_t from = rng() % (exported.size() - 600), length = 1 + rng() % 500;
          if (rng() % 3) block.borrowed.push_back({block.bytes.size(), from, length});
          block.bytes.append(exported, from, length);
          if (rng() % 2) block.bytes += "-";  // stored bytes between runs, or none
        }
        block.bytes += "\"}\n";
      }
      session += block.bytes;
      for (const BorrowedRun& run : block.borrowed) stored -= run.length;
      stored += block.bytes.size();
      indexer.append(block);
      EXPECT_TRUE(block.bytes.empty() && block.borrowed.empty());
    }
    const SessionIndex index = indexer.finish();
    EXPECT_EQ(index.entries.size(), std::count(session.begin(), session.end(), '\n'));
    layout = indexer.take_layout();
  }
  EXPECT_EQ(layout.session_size(), session.size());
  EXPECT_EQ(layout.stored_size(), stored);
  EXPECT_EQ(static_cast<std::uint64_t>(::lseek(fileno(spool_file), 0, SEEK_END)), stored)
      << "only stored bytes are written";
  EXPECT_GT(layout.run_count(), 20u);
  auto source = make_spool_line_source(fileno(spool_file), fileno(export_file), std::move(layout), "spool");
  std::string scratch;
  for (int i = 0; i < 3000; ++i) {
    const std::uint64_t offset = rng() % session.size();
    const std::uint64_t length = rng() % (session.size() - offset + 1);
    ASSERT_EQ(source->read(offset, length, scratch), std::string_view(session).substr(offset, length))
        << offset << " " << length;
  }
  EXPECT_EQ(source->read(0, session.size(), scratch), session);
  EXPECT_THROW(source->read(session.size() - 5, 10, scratch), InputShrankError);
  // The export cut short: a borrowed run cannot be read.
  ASSERT_EQ(::ftruncate(fileno(export_file), 0), 0);
  EXPECT_THROW(source->read(0, session.size(), scratch), InputShrankError);
}

}  // namespace
}  // namespace pihydrate
