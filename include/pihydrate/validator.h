// `pi-hydrate validate`: does pi load this file, what does it silently lose or
// change, and what breaks when the conversation resumes.
#pragma once

#include <cstdint>
#include <string>

#include "pihydrate/diagnostic.h"
#include "pihydrate/pi_view.h"
#include "pihydrate/session_index.h"

namespace pihydrate {

struct ValidateOptions {
  Level level = Level::kResume;  // report diagnostics up to this level
  PiVersion pi_version = newest_pi_version();
  bool check_cwd = true;    // --no-cwd-check turns it off
  bool linear = false;      // --linear: branching is an error
  std::string process_cwd;  // relative header cwds resolve here; empty: the real one
  IndexOptions index;
  // The message and lint rules (payloads, tool pairing, fixture
  // conventions). Hydration's look at its input needs only the file and
  // tree rules, and skips these.
  bool content_rules = true;
};

struct FileReport {
  std::string file;
  bool loadable = false;   // `pi --session FILE` starts with the file's own content
  bool resumable = false;  // loadable, and no resume-level errors
  bool complete = true;    // false when a pi-hydrate limit (PH9xx) stopped a check: verdicts unknown
  std::uint64_t lines = 0;
  std::uint64_t entries = 0;
  Diagnostics diagnostics;  // filtered by level; sorted by line, column, code
  std::size_t errors = 0;
  std::size_t warnings = 0;
};

// Validates an indexed file. Never touches the file itself.
FileReport validate_index(const SessionIndex& index, const ValidateOptions& options);
// The same with pi's view of it already built (for options.pi_version).
FileReport validate_index(const SessionIndex& index, const PiView& view, const ValidateOptions& options);

// The report of a file's findings: verdicts from their severities and
// levels, counts, and up to `level` at most kListedPerCode (findings.h)
// listed per code, in the order given, with a summary of the rest.
FileReport summarize_findings(const std::string& file, std::uint64_t lines, std::uint64_t entries, Diagnostics all,
                              Level level);

// options.index, keeping the timestamps' text only when lint rules run (it
// is most of the index's strings on a file of many short entries).
IndexOptions index_options_for(const ValidateOptions& options);

// Reads `source` in one streaming pass and validates it.
FileReport validate_source(ByteSource& source, const std::string& display_name, const ValidateOptions& options);

}  // namespace pihydrate
