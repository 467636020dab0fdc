// Event capture -> thread export: what pi printed on stdout in `--mode json`
// or `--mode rpc` (one or more runs, docs/events.md) mapped to the JSONL
// variant of a thread export (docs/thread-export.md), which hydrate_events
// then hydrates through the thread path: one set of lossy rules for both.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "pihydrate/diagnostic.h"
#include "pihydrate/reader.h"
#include "readers/log_source.h"

namespace pihydrate {

struct EventCapture {
  std::string thread;                            // the thread export, JSONL variant, when read from a string
  SourceMap origins;                             // one per line of `thread`, named by its event's type
  Diagnostics diagnostics;                       // reading the capture (PH603, PH604)
  std::map<std::string, std::uint64_t> repairs;  // what was mapped by a rule that changes it, counted
  std::uint64_t events = 0;                      // JSON events read
  bool ok() const;
  // A diagnostic the thread export reader reported at the thread's
  // line:column (a message starting with its `entries[N]` path), moved to
  // the capture's line:column and named by the event instead.
  void map_back(Diagnostic& d) const;
  // How a message about the thread's entry reads for the capture's reader:
  // its `entries[N]` path (and id) replaced by `event`, the event's type.
  static std::string renamed(const std::string& message, std::string_view event);
};

// Whether `type` is one of the events pi prints in json or RPC mode (or an
// RPC command logged beside them): what the event capture reader bids on.
bool is_pi_event_type(std::string_view type);

// Reads `capture` twice, a line at a time (lone UTF-16 surrogate escapes
// rewritten at the same length, as the thread path would), and hands the
// thread export to `write` in blocks of whole lines, about a MiB each
// (`write` takes the text, leaving it empty), only when ok(). `file` names
// the capture in diagnostics.
EventCapture convert_event_capture(const LogSource& capture, const std::string& file,
                                   const std::function<void(std::string& text)>& write);
// The same with the capture in memory and the thread export in EventCapture::thread.
EventCapture convert_event_capture(std::string capture, const std::string& file);

}  // namespace pihydrate
