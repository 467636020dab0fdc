// The hydration plan: which entries are written, in which order, with which
// ids and repairs. Decisions only; bytes are produced while writing, so memory
// stays proportional to the number of entries, not the file size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/json_spans.h"
#include "pihydrate/hydrate.h"

namespace pihydrate {

enum class Synthetic : std::uint8_t {
  kNone,
  kMissingResult,  // a toolResult for a call that has none
  kModelChange,    // keeps the model when the assistant that set it is not written
  kUserMessage,    // a user message before a conversation that starts with another role
};

// What is written into a message's content so that every provider reads it
// (entry_rewriter.cc writes it, tool_policy.cc counts it).
enum class ContentRepair : std::uint8_t {
  kNone,
  kFill,           // null, missing or neither array nor string: []
  kWrap,           // an assistant's or tool result's string: one text block ([] when blank)
  kDropBlankText,  // text blocks without text, or white space only, are left out
  kNoToolOutput,   // a tool result with nothing to send: one text block that says so
};

// The text of kNoToolOutput: the words pi 1.5's pi-ai itself sends to OpenAI
// for an empty result, so those requests do not change.
inline constexpr const char* kNoToolOutputText = "(no tool output)";

constexpr std::uint32_t kNoRenamedIds = UINT32_MAX;

struct PlannedEntry {
  std::int64_t node = -1;  // source node in the PiView, or -1 for a synthetic entry
  Synthetic synthetic = Synthetic::kNone;
  std::uint32_t call = 0;         // kMissingResult: which tool call of `call_node`
  std::int64_t call_node = -1;    // kMissingResult / kModelChange: the source node it derives from
  std::string id;                 // output id (assigned last)
  std::int64_t ref_target = -1;   // plan index a reference member should name (firstKeptEntryId, fromId, targetId)
  bool ref_self = false;          // compaction: keep nothing before it (self-anchor)
  bool rename_hook_role = false;  // v2 migration: message.role hookMessage -> custom
  bool flatten = false;           // --tools flatten applies to this entry's message
  // Tool call ids written instead of the source's: Plan::renamed_call_ids
  // from here, one per call of an assistant ("" keeps a call's id), or the
  // one id a result answers. kNoRenamedIds: none renamed.
  std::uint32_t renamed_ids = kNoRenamedIds;
};

struct Plan {
  std::vector<PlannedEntry> entries;
  // When the latest compaction's first kept entry is a result that moved to
  // its call, the kept window starts at that call's assistant instead.
  std::int64_t first_kept_override = -1;      // node
  std::vector<std::string> renamed_call_ids;  // see PlannedEntry::renamed_ids
};

// The content repair of a source message entry written as `p` plans.
ContentRepair content_repair(const PlannedEntry& p, const Entry& e);
// Whether an assistant message is written with the zeroed usage (or cost)
// pi's interactive footer needs.
inline bool needs_usage(const Entry& e) {
  return e.role == Role::kAssistant && (e.usage_kind != JsonKind::kObject || e.usage_cost_kind != JsonKind::kObject);
}

// Steps, in order (each in its own file under src/hydrate/).
// branch.cc: the path to write, or an error diagnostic.
bool select_path(const SessionIndex& index, const PiView& view, const HydrateOptions& options,
                 std::vector<std::uint32_t>& path, HydrateReport& report);
// tool_policy.cc: order entries, pair or flatten tool calls, count repairs.
Plan plan_entries(const SessionIndex& index, const PiView& view, const std::vector<std::uint32_t>& path,
                  const HydrateOptions& options, HydrateReport& report);
// references.cc: which written entry each reference names; drops labels
// whose target is not written.
void resolve_references(const SessionIndex& index, const PiView& view, Plan& plan, HydrateReport& report);
// id_assigner.cc: keep unique valid ids, assign deterministic new ones.
void assign_ids(const SessionIndex& index, const PiView& view, Plan& plan, std::string_view seed);
// carried_strings.cc: the strings of `input` (an index's long strings)
// wholly inside input bytes [in, in + length), which the output copied
// unchanged to offset `out`, added to `carried` at their output offsets.
void note_carried_strings(const LongStrings& input, std::uint64_t in, std::uint64_t out, std::uint64_t length,
                          LongStrings& carried);
// entry_rewriter.cc: the output line of one planned entry (without its
// '\n'), appended to `out`. `copied` (optional) gets the runs of the
// source line copied unchanged (ByteEdits::append_applied's).
void append_rendered_entry(std::string& out, const SessionIndex& index, const PiView& view, const Plan& plan,
                           std::size_t i, std::string_view source_line, const HydrateOptions& options,
                           std::vector<ByteEdits::CopiedRun>* copied = nullptr);

}  // namespace pihydrate
