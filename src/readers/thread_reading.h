// What reading a thread export gives before any rule runs: the accepted
// entries, in the order they are converted, with what the rules read of
// them, and what reading reported. Two readers give it: the converter's
// reader (mapped bytes, pages dropped behind it, plan facts taken as each
// entry is checked) and, in the tests only, a reference reader that reads
// the contract plainly (tests/common/thread_reference_reader.h). Tests
// compare the two on every golden export and on mutations of them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pihydrate/diagnostic.h"
#include "readers/thread_export.h"
#include "readers/thread_rules.h"

namespace pihydrate {

struct ReadEntry {
  std::uint64_t index = 0;  // position in the export
  thread_rules::Kind kind = thread_rules::Kind::kUnknown;
  thread_rules::ChatRole role = thread_rules::ChatRole::kNone;
  bool has_stream_key = false;
  std::string id, ref, stream_key, final_timestamp;  // as in thread_rules::RuleEntry
  bool operator==(const ReadEntry& o) const {
    return index == o.index && kind == o.kind && role == o.role && has_stream_key == o.has_stream_key && id == o.id &&
           ref == o.ref && stream_key == o.stream_key && final_timestamp == o.final_timestamp;
  }
};

struct ReadThread {
  bool json_valid = false;      // false: not JSON (either variant); nothing else is filled
  bool number_too_big = false;  // the reference reader's: a number beyond a double's range
  std::vector<ReadEntry> entries;
  std::uint64_t entry_count = 0;  // entries in the export
  Diagnostics diagnostics;        // errors stop the conversion; warnings do not
  std::map<std::string, std::uint64_t> repairs;
};

// The converter's reader: what convert_thread_export reads, stopped before planning.
ReadThread read_thread_fast(std::string bytes, const std::string& file, const ThreadOptions& options);

}  // namespace pihydrate
