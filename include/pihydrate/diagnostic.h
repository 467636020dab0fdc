// Diagnostics are data: a stable code, a severity, a level, a position and
// words for a human. Formatting them (text, json, github) is the CLI's job.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pihydrate {

// Stable diagnostic codes. A number is never reused for another meaning;
// docs/diagnostics.md documents each one. Groups:
//   PH0xx bytes and lines      PH1xx header and file     PH2xx entry tree
//   PH3xx messages and context PH4xx tool calls          PH5xx lint
//   PH6xx other inputs         PH7xx hydrate options      PH9xx limits of pi-hydrate itself
enum class Code : std::uint16_t {
  kMalformedLine = 1,
  kGluedRecords = 2,
  kTruncatedLastLine = 3,
  kByteOrderMark = 4,
  kInvalidUtf8 = 5,
  kNulByte = 6,
  kCrlf = 7,
  kNonObjectLine = 8,
  kNullLine = 9,

  kEmptyFile = 101,
  kNoHeader = 102,
  kCwdMissing = 103,
  kCwdNotString = 104,
  kNoCwd = 105,
  kMigratedOnLoad = 106,
  kUnversionedTree = 107,
  kExtraHeader = 108,
  kNonObjectInV1 = 109,
  kOddVersion = 110,

  kParentCycle = 201,
  kDuplicateId = 202,
  kDanglingParent = 203,
  kMissingId = 204,
  kLeafOffLatestBranch = 205,

  kMessageMissing = 301,
  kUsageMissing = 302,
  kContentNotArray = 303,
  kUnknownRole = 304,
  kPendingStopReason = 305,
  kCompactionAnchorOffPath = 306,
  kLabelTargetMissing = 307,
  kBlankTextBlock = 308,
  kEmptyMessage = 309,
  kFirstMessageNotUser = 310,

  kOrphanToolResult = 401,
  kMissingToolResult = 402,
  kResultOfSkippedAssistant = 403,
  kMessageBetweenCallAndResult = 404,
  kDuplicateToolResult = 405,
  kBadToolCallId = 406,

  kEntryIdFormat = 501,
  kSessionIdFormat = 502,
  kEntryTimestampFormat = 503,
  kMessageTimestampFormat = 504,
  kTimestampBackwards = 505,
  kUnknownEntryType = 506,
  kVersionMissing = 507,
  kBranching = 508,
  kDerivedTimestampMissing = 509,

  kThreadExportInvalid = 601,
  kThreadEntrySkipped = 602,
  kEventCaptureInvalid = 603,
  kEventSkipped = 604,
  kTranscriptInvalid = 605,
  kTranscriptRecordDropped = 606,

  kBranchNotFound = 701,

  kLineTooLong = 901,
  kNestingTooDeep = 902,
  kTooManyEntries = 903,
  kInputChanged = 904,
};

enum class Severity : std::uint8_t { kError, kWarning };

// The level a diagnostic belongs to; `--level` filters by it.
//   load:   pi refuses, destroys, hangs on or crashes with the file.
//   resume: pi loads, but the resumed conversation differs from the file.
//   lint:   conventions for hand-written fixtures.
enum class Level : std::uint8_t { kLoad = 0, kResume = 1, kLint = 2 };

struct CodeInfo {
  Code code;
  Level level;
  const char* slug;   // short stable name, e.g. "malformed-line"
  const char* title;  // one line for docs and --list-codes
};

// The table of all codes, in numeric order.
const std::vector<CodeInfo>& all_codes();
const CodeInfo& code_info(Code code);
std::string code_name(Code code);  // "PH001"

struct Diagnostic {
  Code code;
  Severity severity;
  Level level;
  std::string file;
  std::uint64_t line = 0;    // 1-based; 0 means the whole file
  std::uint64_t column = 0;  // 1-based byte column; 0 when line is 0
  std::string message;
  std::string hint;
  // A summary's: how many findings of its code it stands for, not listed
  // (findings.h). 0 for a finding of its own.
  std::uint64_t unlisted = 0;
};

using Diagnostics = std::vector<Diagnostic>;

const char* severity_name(Severity severity);

// A value quoted for a message: escaped, and shortened to one line.
std::string quote_for_message(std::string_view text);
const char* level_name(Level level);

}  // namespace pihydrate
