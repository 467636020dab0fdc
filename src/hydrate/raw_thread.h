// Thread exports that carry raw pi entries (docs/thread-export.md, "Raw pi
// entries", rules X1-X7): the session pi wrote is put back together from
// them, and only what they do not cover is rebuilt by the lossy rules.
#pragma once

#include <string>
#include <string_view>

#include "hydrate/thread_export.h"

namespace pihydrate {

// True when the export may hold a `pi.entry` or `pi.snapshot` entry: a byte
// search, so an export that only mentions the names in a text takes the
// raw path too, which converts a purely lossy export the same way.
bool may_carry_raw_entries(std::string_view bytes);

// Assembles the session (a v3 file with pi's ids, in `session`, one origin
// per line) from the export's raw entries and snapshot, with the lossy rules
// (convert_thread_export) applied to each run of entries they do not cover.
// `bytes` may be edited in place as convert_thread_export edits them.
// options.spool is not used: the result is held in memory.
ConvertedThread assemble_raw_thread(std::string& bytes, const std::string& file, const ThreadOptions& options);

}  // namespace pihydrate
