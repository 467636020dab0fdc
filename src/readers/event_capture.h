// Event capture -> thread export: what pi printed on stdout in `--mode json`
// or `--mode rpc` (one or more runs, docs/events.md) mapped to the JSONL
// variant of a thread export (docs/thread-export.md), which hydrate_events
// then hydrates through the thread path: one set of lossy rules for both.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pihydrate/diagnostic.h"

namespace pihydrate {

// Where one line of the thread text came from in the capture.
struct CaptureOrigin {
  std::uint64_t line = 0;    // the event's line in the capture (1-based)
  std::uint64_t column = 0;  // its object's first byte (1-based)
  // Bytes the thread line copies verbatim from the capture (a message): a
  // position inside them maps to the same byte in the capture.
  std::uint64_t copied_column = 0;  // their first byte in the thread line (1-based); 0: none
  std::uint64_t copied_size = 0;
  std::uint64_t capture_copied_column = 0;  // their first byte in the capture line
  const char* event = "";                   // the event's type, to name it in messages
};

struct EventCapture {
  std::string thread;                            // the thread export, JSONL variant; empty unless ok()
  std::vector<CaptureOrigin> origins;            // one per line of `thread`
  Diagnostics diagnostics;                       // reading the capture (PH603, PH604)
  std::map<std::string, std::uint64_t> repairs;  // what was mapped by a rule that changes it, counted
  std::uint64_t events = 0;                      // JSON events read
  bool ok() const;
  // A diagnostic the thread path reported at the thread's line:column
  // (a message starting with its `entries[N]` path), moved to the capture's
  // line:column and named by the event instead.
  void map_back(Diagnostic& d) const;
};

// Reads `capture` (lone UTF-16 surrogate escapes are rewritten in place,
// at the same length, as the thread path would). `file` names it in
// diagnostics.
EventCapture convert_event_capture(std::string& capture, const std::string& file);

}  // namespace pihydrate
