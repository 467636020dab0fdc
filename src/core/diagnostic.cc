// Diagnostics as data: the code table, code and level names, and quoting a value for a message.
#include "pihydrate/diagnostic.h"

#include <algorithm>
#include <cstdio>

namespace pihydrate {

const std::vector<CodeInfo>& all_codes() {
  static const std::vector<CodeInfo> codes = {
      {Code::kMalformedLine, Level::kResume, "malformed-line", "a line is not valid JSON; pi skips it"},
      {Code::kGluedRecords, Level::kResume, "glued-records", "two JSON records on one line; pi skips both"},
      {Code::kTruncatedLastLine, Level::kResume, "truncated-last-line", "the last line is cut off; pi skips it"},
      {Code::kByteOrderMark, Level::kLoad, "byte-order-mark", "the file starts with a UTF-8 BOM (fatal in pi 1.x)"},
      {Code::kInvalidUtf8, Level::kResume, "invalid-utf8", "invalid UTF-8; pi replaces the bytes with U+FFFD"},
      {Code::kNulByte, Level::kResume, "nul-byte", "a NUL byte makes the line invalid JSON; pi skips it"},
      {Code::kCrlf, Level::kLint, "crlf", "CRLF line endings"},
      {Code::kNonObjectLine, Level::kResume, "non-object-line", "a line holds a JSON value that is not an object"},
      {Code::kNullLine, Level::kLoad, "null-line", "a line holds `null` (pi 0.78 crashes)"},

      {Code::kEmptyFile, Level::kLoad, "empty-file", "the file is empty or whitespace only"},
      {Code::kNoHeader, Level::kLoad, "no-header", "no valid session header"},
      {Code::kCwdMissing, Level::kLoad, "cwd-missing", "the header cwd names no existing directory"},
      {Code::kCwdNotString, Level::kLoad, "cwd-not-string", "the header cwd is not a string"},
      {Code::kNoCwd, Level::kResume, "no-cwd", "the header has no cwd; pi uses the process cwd"},
      {Code::kMigratedOnLoad, Level::kResume, "migrated-on-load",
       "a v1/v2 file: pi migrates it and rewrites it in place"},
      {Code::kUnversionedTree, Level::kResume, "unversioned-tree",
       "a tree-shaped file without `version`: pi flattens it"},
      {Code::kExtraHeader, Level::kResume, "extra-header", "a second session header; pi ignores it"},
      {Code::kNonObjectInV1, Level::kLoad, "non-object-in-v1", "a non-object line in a v1 file crashes the migration"},
      {Code::kOddVersion, Level::kResume, "odd-version", "the header version is not 1, 2 or 3"},

      {Code::kParentCycle, Level::kLoad, "parent-cycle", "parentId links form a cycle"},
      {Code::kDuplicateId, Level::kResume, "duplicate-id", "two entries share an id; the later one wins"},
      {Code::kDanglingParent, Level::kResume, "dangling-parent", "parentId names no entry; the entry becomes a root"},
      {Code::kMissingId, Level::kResume, "missing-id", "an entry has no string id"},
      {Code::kLeafOffLatestBranch, Level::kResume, "leaf-off-latest-branch",
       "the last entry moves the leaf off the branch with the latest message"},

      {Code::kMessageMissing, Level::kLoad, "message-missing", "a message entry has no message (pi crashes)"},
      {Code::kUsageMissing, Level::kResume, "usage-missing", "an assistant message has no usage or usage.cost"},
      {Code::kContentNotArray, Level::kResume, "content-not-array", "message content is a string or null"},
      {Code::kUnknownRole, Level::kResume, "unknown-role", "a message role pi-ai drops before sending"},
      {Code::kPendingStopReason, Level::kResume, "pending-stop-reason",
       "an assistant message with stopReason \"pending\""},
      {Code::kCompactionAnchorOffPath, Level::kResume, "compaction-anchor-off-path",
       "the compaction's firstKeptEntryId is not on the path"},
      {Code::kLabelTargetMissing, Level::kResume, "label-target-missing", "a label's targetId names no entry"},
      {Code::kBlankTextBlock, Level::kResume, "blank-text-block", "a text block with no text, or white space only"},
      {Code::kEmptyMessage, Level::kResume, "empty-message",
       "a user, assistant or tool result message with nothing to send"},
      {Code::kFirstMessageNotUser, Level::kResume, "first-message-not-user",
       "the first message sent to the model is not a user message"},

      {Code::kOrphanToolResult, Level::kResume, "orphan-tool-result", "a tool result with no matching call"},
      {Code::kMissingToolResult, Level::kResume, "missing-tool-result", "a tool call with no result"},
      {Code::kResultOfSkippedAssistant, Level::kResume, "result-of-skipped-assistant",
       "a result of an error/aborted assistant, which pi-ai drops"},
      {Code::kMessageBetweenCallAndResult, Level::kResume, "message-between-call-and-result",
       "a message between a tool call and its result"},
      {Code::kDuplicateToolResult, Level::kResume, "duplicate-tool-result", "a second result for the same tool call"},
      {Code::kBadToolCallId, Level::kResume, "bad-tool-call-id",
       "a tool call id repeats, or fails ^[a-zA-Z0-9_-]{1,64}$ where pi-ai sends it as is to Anthropic"},

      {Code::kEntryIdFormat, Level::kLint, "entry-id-format", "an entry id is not 8 lowercase hex digits"},
      {Code::kSessionIdFormat, Level::kLint, "session-id-format", "the header id fails pi's session-id rule"},
      {Code::kEntryTimestampFormat, Level::kLint, "entry-timestamp-format", "an entry timestamp is not ISO-8601"},
      {Code::kMessageTimestampFormat, Level::kLint, "message-timestamp-format",
       "message.timestamp is not epoch milliseconds"},
      {Code::kTimestampBackwards, Level::kLint, "timestamp-backwards", "timestamps go backwards"},
      {Code::kUnknownEntryType, Level::kLint, "unknown-entry-type", "an entry type pi does not know"},
      {Code::kVersionMissing, Level::kLint, "version-missing", "the header has no version"},
      {Code::kBranching, Level::kLint, "branching", "the file branches (with --linear)"},
      {Code::kDerivedTimestampMissing, Level::kLint, "derived-timestamp-missing",
       "a summary or custom message entry has no usable timestamp"},

      {Code::kThreadExportInvalid, Level::kLoad, "thread-export-invalid",
       "the thread export breaks docs/thread-export.md; nothing is written"},
      {Code::kThreadEntrySkipped, Level::kResume, "thread-entry-skipped",
       "a thread entry is left out (unknown kind, aborted compaction, interrupted stream, ...)"},
      {Code::kEventCaptureInvalid, Level::kLoad, "event-capture-invalid",
       "the event capture has no conversation, or holds more than one session; nothing is written"},
      {Code::kEventSkipped, Level::kResume, "event-skipped",
       "a line of the event capture is left out (not JSON, an unknown event, what a thread cannot carry)"},
      {Code::kTranscriptInvalid, Level::kLoad, "transcript-invalid",
       "the file is not a pi session, Claude Code transcript or Codex rollout, or breaks its format; nothing is "
       "written"},
      {Code::kTranscriptRecordDropped, Level::kResume, "transcript-record-dropped",
       "a record of a Claude Code or Codex transcript is not carried over (docs/claude-code.md, docs/codex.md)"},

      {Code::kBranchNotFound, Level::kLoad, "branch-not-found",
       "--leaf or --label names no entry (or the file has no ids to name)"},

      {Code::kLineTooLong, Level::kLoad, "line-too-long", "a line is longer than --max-line-bytes; not checked"},
      {Code::kNestingTooDeep, Level::kLoad, "nesting-too-deep", "a line nests deeper than --max-depth; not checked"},
      {Code::kTooManyEntries, Level::kLoad, "too-many-entries", "more entries than --max-entries; not checked"},
      {Code::kInputChanged, Level::kLoad, "input-changed",
       "the input changed while pi-hydrate read it; nothing written"},
  };
  return codes;
}

const CodeInfo& code_info(Code code) {
  const auto& codes = all_codes();
  auto it = std::find_if(codes.begin(), codes.end(), [code](const CodeInfo& c) { return c.code == code; });
  return *it;  // every enumerator is in the table (a unit test checks it)
}

std::string code_name(Code code) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "PH%03u", static_cast<unsigned>(code));
  return buf;
}

std::string quote_for_message(std::string_view text) {
  constexpr std::size_t kMax = 60;
  std::string out = "\"";
  std::size_t i = 0;
  for (; i < text.size() && i < kMax; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (i < text.size()) out += "...";
  out += '"';
  return out;
}

const char* severity_name(Severity severity) { return severity == Severity::kError ? "error" : "warning"; }

const char* level_name(Level level) {
  switch (level) {
    case Level::kLoad: return "load";
    case Level::kResume: return "resume";
    case Level::kLint: return "lint";
  }
  return "?";
}

}  // namespace pihydrate
