// Thread exports that carry raw pi entries (docs/thread-export.md, "Raw pi
// entries", rules X1-X7): the session pi wrote is put back together from
// them, and only what they do not cover is rebuilt by the lossy rules.
#pragma once

#include <string>

#include "readers/thread_export.h"

namespace pihydrate {

// For an export convert_thread_export read without an error and found
// pi.entry or pi.snapshot in (ConvertedThread::carries_raw_entries):
// assembles the session (a v3 file with pi's ids, in `session`, one origin
// per line) from the export's raw entries and snapshot, with the lossy rules
// (convert_thread_export) applied to each run of entries they do not cover.
// `bytes` may be edited in place as convert_thread_export edits them.
// Only options.partial, trailer and max_depth are used: the result is held in memory.
ConvertedThread assemble_raw_thread(std::string& bytes, const std::string& file, const ThreadOptions& options);

}  // namespace pihydrate
