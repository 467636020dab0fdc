// The readers pi-hydrate ships: one line each. An input is read by the one
// that bids highest for its first lines (pihydrate/reader.h); --from names
// one instead. A new format is a reader file and a line here
// (docs/architecture.md, "How to add a reader").
#include "readers/readers.h"

namespace pihydrate {

const ReaderRegistry& ReaderRegistry::standard() {
  static const ReaderRegistry registry = [] {
    ReaderRegistry r;
    r.add(pi_session_reader());  // first: what an input nobody bids for is read as
    r.add(thread_export_reader());
    r.add(pi_events_reader());
    r.add(claude_code_reader());
    r.add(codex_reader());
    r.add(gemini_cli_reader());
    r.add(qwen_code_reader());
    r.add(opencode_reader());
    r.add(copilot_cli_reader());
    r.add(kilo_cli_reader());
    return r;
  }();
  return registry;
}

}  // namespace pihydrate
