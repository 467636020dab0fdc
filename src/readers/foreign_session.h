// Transcripts other coding agents write (Claude Code, Codex) as pi
// sessions: each reader follows its format's rules (docs/claude-code.md,
// docs/codex.md) and writes a v3 session in memory, which hydrate_session
// then hydrates as it does pi's own files: --cwd, the branch, pairing or
// flattening, verification.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pihydrate/diagnostic.h"
#include "pihydrate/pihydrate.h"

namespace pihydrate {

// What format a session file is in, from its first record: pi's header
// ({"type":"session",...}), a Claude Code record (uuid, sessionId) or a
// Codex rollout line ({timestamp, type, payload}). kAuto when none of them:
// `tried` then says what each format wanted.
struct FormatGuess {
  SessionFormat format = SessionFormat::kAuto;
  std::string tried;
};
FormatGuess guess_session_format(std::string_view head);

// Where one line of the written session came from in the transcript.
struct TranscriptOrigin {
  std::uint64_t line = 0;
  std::uint64_t column = 0;
  std::string record;  // names the record in messages: "assistant record", "response_item function_call"
};

struct ForeignSession {
  std::string session;                           // pi v3 JSONL; empty unless ok()
  std::vector<TranscriptOrigin> origins;         // one per line of `session`
  Diagnostics diagnostics;                       // reading the transcript (PH605, PH606)
  std::map<std::string, std::uint64_t> repairs;  // what was dropped or translated, counted
  std::uint64_t records = 0;                     // JSON lines read
  bool ok() const;
  // A diagnostic the session path reported at the written session's line,
  // moved to the transcript's line:column and named by its record.
  void map_back(Diagnostic& d) const;
};

// Each reads the whole transcript (`file` names it in diagnostics). A
// Claude Code transcript is a tree: the branch written ends at the record
// whose uuid is `leaf`, or by default at the last user or assistant record.
ForeignSession convert_claude_code(const std::string& transcript, const std::string& file,
                                   const std::string& leaf = {});
ForeignSession convert_codex(const std::string& rollout, const std::string& file);

}  // namespace pihydrate
