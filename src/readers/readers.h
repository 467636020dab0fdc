// The readers pi-hydrate ships (registry.cc lists them), and the
// conversions behind them, which tests call directly.
#pragma once

#include <string>

#include "pihydrate/reader.h"

namespace pihydrate {

const Reader& pi_session_reader();     // pi_session_reader.cc
const Reader& thread_export_reader();  // thread_export_reader.cc
const Reader& pi_events_reader();      // pi_events_reader.cc
const Reader& claude_code_reader();    // claude_code_reader.cc
const Reader& codex_reader();          // codex_reader.cc
const Reader& gemini_cli_reader();     // gemini_cli_reader.cc
const Reader& qwen_code_reader();      // qwen_code_reader.cc
const Reader& opencode_reader();       // opencode_reader.cc
const Reader& copilot_cli_reader();    // copilot_cli_reader.cc
const Reader& kilo_cli_reader();       // opencode_reader.cc (Kilo CLI: OpenCode's reader, its names)

// The session text a transcript stands for (its origins, findings and
// counts in `out`); empty when it cannot be read. `file` names the
// transcript in diagnostics. A Claude Code transcript is a tree: the branch
// written ends at the record whose uuid is `leaf`, or by default at the last
// user or assistant record.
std::string convert_claude_code(std::string transcript, const std::string& file, const std::string& leaf,
                                ReadSession& out);
std::string convert_codex(std::string rollout, const std::string& file, ReadSession& out);
std::string convert_gemini_cli(std::string chat_log, const std::string& file, ReadSession& out);
// A Qwen Code chat file is a chain of records: the chain written ends at the
// record whose uuid is `leaf`, or by default at the file's last record.
std::string convert_qwen_code(std::string chat, const std::string& file, const std::string& leaf, ReadSession& out);

std::string convert_copilot_cli(std::string events, const std::string& file, ReadSession& out);
// The file a --session argument names: the argument itself; or, for a Copilot CLI
// session's folder, its events.jsonl; or, for a bare session id, that of the folder
// under `copilot_home` ($COPILOT_HOME) or `home`/.copilot (either may be null).
std::string copilot_cli_session_file(const std::string& argument, const char* copilot_home, const char* home);

}  // namespace pihydrate
