// SpoolIndexer: a converted session (a thread export's, a transcript's)
// written to the spool and indexed on a second thread while the converter
// produces it (fast path).
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "core/files.h"
#include "pihydrate/hydrate.h"
#include "pihydrate/session_index.h"
#include "pihydrate/spool.h"

namespace pihydrate {

// A converted session's lines, read back from its spool (make_spool_line_source),
// which it owns.
class SpooledLines final : public LineSource {
 public:
  Fd spool;
  std::unique_ptr<LineSource> lines;
  std::string_view read(std::uint64_t offset, std::uint64_t length, std::string& scratch) override {
    return lines->read(offset, length, scratch);
  }
};

// Writes a spool file and indexes it on a second thread, block by block,
// while the caller produces the blocks: a thread export's converter keeps one
// core busy and hands its lines over; the other core writes them to the spool
// file and indexes them, so the index is ready when the conversion ends. The
// index is build_session_index's of the whole session. A block's borrowed
// runs are indexed but not written (see spool.h).
class SpoolIndexer {
 public:
  SpoolIndexer(int fd, std::string display_name, const IndexOptions& options = {});
  ~SpoolIndexer();  // stops and waits for the thread; what it had is dropped
  SpoolIndexer(const SpoolIndexer&) = delete;
  SpoolIndexer& operator=(const SpoolIndexer&) = delete;

  // Takes `block` (whole lines, '\n'-terminated) and leaves an empty one in
  // its place, to be filled again. Waits while a few blocks are pending.
  // Throws the IoError that stopped the writing thread, if one did.
  void append(SpoolBlock& block);
  // No more blocks: waits until everything is written and indexed, and
  // returns the index. Throws IoError as append does.
  SessionIndex finish();
  // After finish: where the session's bytes are (for make_spool_line_source).
  SpoolLayout take_layout();

 private:
  class Source;
  std::unique_ptr<Source> source_;
  SessionIndex index_;
  std::thread thread_;
};

}  // namespace pihydrate
