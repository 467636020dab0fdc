// The transcript readers on arbitrary bytes: never a crash, and a
// transcript they accept becomes a session whose every line parses, with one
// origin per line, and which the session path then hydrates. Every reader
// bids on the same bytes as a head.
#include <string>

#include "fuzz_common.h"
#include "readers/readers.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace pihydrate;
  if (size == 0) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  // The first byte picks the reader, so one corpus feeds them all: bit 3
  // Qwen Code, else bit 2 Gemini CLI, else bit 0 Claude Code or Codex; bit 1
  // asks for a --leaf.
  ReadSession converted;
  const std::string leaf = (data[0] & 2) != 0 ? "u1" : "";
  // Bit 4 (before the others) picks Copilot CLI.
  const std::string session = (data[0] & 16) != 0  ? convert_copilot_cli(bytes, "fuzz", converted)
                              : (data[0] & 8) != 0 ? convert_qwen_code(bytes, "fuzz", leaf, converted)
                              : (data[0] & 4) != 0 ? convert_gemini_cli(bytes, "fuzz", converted)
                              : (data[0] & 1) != 0 ? convert_claude_code(bytes, "fuzz", leaf, converted)
                                                   : convert_codex(bytes, "fuzz", converted);
  (void)ReaderRegistry::standard().choose(make_input_head(bytes, true));
  if (!converted.ok()) return 0;
  auto source = make_memory_source(session);
  SessionIndex index = build_session_index(*source, "converted", IndexOptions());
  if (!index.bad_lines.empty()) __builtin_trap();  // the reader writes one JSON object per line
  std::size_t lines = 0;
  for (char c : session) lines += c == '\n';
  if (lines != converted.origins.size()) __builtin_trap();
  auto line_source = make_memory_line_source(session);
  fuzz::CollectingSink sink;
  HydrateReport report;
  HydrateOptions options;
  options.cwd = "/sandbox";
  if (!hydrate_session(index, *line_source, options, sink, report)) return 0;
  return 0;
}
