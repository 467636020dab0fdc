// The pi view: what a given pi version sees when it loads a session file.
// This is the only place that knows pi's loading rules (which lines it keeps,
// the v1->v2->v3 migration, the leaf, the parent walk, the context and
// pi-ai's tool-call repairs). The validator reports where the view and the
// file disagree; the hydrator writes files whose view is the conversation.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pihydrate/pi_profile.h"
#include "pihydrate/session_index.h"

namespace pihydrate {

enum class LoadOutcome : std::uint8_t {
  kLoads,         // pi starts with the file's own content
  kFreshSession,  // empty file: pi writes a new header into it
  kReplaced,      // no valid header, pi truncates the file and starts fresh (replaces_file_without_header)
  kRefused,       // no valid header: "Session file is not a valid pi session"
  kCrash,         // an exception while loading
  kHang,          // an endless loop on a parent cycle (hangs_on_parent_cycle)
};

// Where a node's parentId leads.
enum class ParentLink : std::uint8_t { kRoot, kLinked, kDangling };

// One message of the context pi builds (buildSessionContext), before and
// after pi-ai's conversion.
enum class ContextKind : std::uint8_t { kMessage, kCustomMessage, kBranchSummary, kCompactionSummary };

struct ContextItem {
  std::uint32_t node = 0;  // position in PiView::nodes
  ContextKind kind = ContextKind::kMessage;
  // The role pi-ai sees after convertToLlm, or kNone when it drops the message.
  Role llm_role = Role::kNone;
};

struct PiView {
  PiVersion version = newest_pi_version();
  const PiProfile& profile() const { return pi_profile(version); }
  LoadOutcome outcome = LoadOutcome::kLoads;
  std::string failure;  // pi's own words, when it does not load
  std::uint64_t failure_line = 0;

  std::vector<std::uint32_t> kept;  // index.entries pi keeps, in file order
  std::int64_t header = -1;         // entry index of the header, or -1

  // Version and migration.
  bool version_missing = true;
  double header_version = 1;  // `version ?? 1` as a number; NaN when JavaScript cannot compare it
  bool migrates_v1 = false;   // ids regenerated, tree flattened to file order
  bool migrates_v2 = false;   // hookMessage -> custom
  bool rewrites_file = false;

  // The tree pi indexes: kept non-session entries in file order.
  std::vector<std::uint32_t> nodes;               // entry index per node
  std::vector<std::uint32_t> node_kept_position;  // node -> position in `kept` (v1 index target)
  std::vector<std::int64_t> parent;               // node -> parent node or -1
  std::vector<ParentLink> link;                   // node -> how its parentId resolved
  std::vector<std::uint8_t> shadowed;             // node's id reused by a later node
  std::int64_t leaf = -1;                         // node the parent walk starts from
  bool leaf_is_null = false;                      // the last entry's id is null: empty context
  std::vector<std::uint32_t> path;                // nodes root..leaf
  std::int64_t cycle_node = -1;                   // first node seen twice on the walk

  // Context along the path.
  std::int64_t compaction = -1;  // node of the latest compaction on the path
  bool first_kept_found = false;
  std::int64_t first_kept_index_target = -1;  // v1: node firstKeptEntryIndex maps to
  std::vector<ContextItem> context;

  const Entry& entry(const SessionIndex& index, std::uint32_t node) const { return index.entries[nodes[node]]; }
  bool loads() const { return outcome == LoadOutcome::kLoads; }
};

// `ignore_bom`: read the file as if a leading UTF-8 BOM were not there
// (hydration does, to rescue a file pi refuses only because of it).
PiView build_pi_view(const SessionIndex& index, PiVersion version, bool ignore_bom = false);

// The key a JavaScript Map sees for an id-like member: its JSON kind takes
// part, since byId.get("5") does not find an entry whose id is the number 5.
// The text is a view into the index's arena: maps over a big session's ids
// copy no strings.
struct JsMapKey {
  JsonKind kind = JsonKind::kMissing;  // arrays and objects both as kObject: they never compare equal anyway
  std::string_view text;
  bool operator==(const JsMapKey& other) const { return kind == other.kind && text == other.text; }
};
JsMapKey js_map_key(const Field& f);
struct JsMapKeyHash {
  std::size_t operator()(const JsMapKey& k) const {
    return std::hash<std::string_view>()(k.text) ^ static_cast<std::size_t>(k.kind);
  }
};

// Recomputes compaction and context from `view.path` (for a path other than
// the leaf's, e.g. the branch --leaf chooses).
void rebuild_context(const SessionIndex& index, PiView& view);

// ---- pi-ai's tool pairing over the context (transformMessages) ----

enum class PairingIssue : std::uint8_t {
  kOrphanResult,        // result with no call in its turn: sent as-is, the provider rejects it
  kMissingResult,       // call without result: pi-ai sends "No result provided"
  kResultOfSkipped,     // result of an error/aborted assistant, which pi-ai drops
  kInterleaved,         // a message between a call and its result
  kDuplicateResult,     // a second result for the same call
  kBadToolCallId,       // fails ^[a-zA-Z0-9_-]{1,64}$
  kRepeatedToolCallId,  // an earlier call already used this id
};

struct PairingFinding {
  PairingIssue issue;
  std::uint32_t node;  // where to report it
  std::string tool_call_id;
  std::uint32_t column = 0;       // column on node's line, when known
  std::int64_t call_node = -1;    // the assistant that made the call
  std::int64_t result_node = -1;  // the (first) result
  std::int64_t closer_node = -1;  // the message that closed the turn
};

std::vector<PairingFinding> find_pairing_issues(const SessionIndex& index, const PiView& view);

bool is_valid_tool_call_id(std::string_view id);

// Whether a tool call id must get a new name before pi-ai can send it, and
// why; the hydrator (pair mode) and PH406 both ask this. pi-ai writes an
// OpenAI Responses call's id as "<call_id>|<item_id>" and, resuming with the
// same model, splits it again; with another model its transformMessages
// normalises ids itself (for Anthropic each character outside
// [a-zA-Z0-9_-] becomes '_', at most 64). So an id keeps its name unless it
// is not a string, is empty, an earlier call keeps it (`used_before`), or
// pi-ai may send it unchanged to Anthropic, which requires
// ^[a-zA-Z0-9_-]{1,64}$: the assistant's api is "anthropic-messages" or it
// has none (a string) to tell.
enum class ToolCallIdProblem : std::uint8_t { kNone, kNotString, kEmpty, kRejected, kRepeated };
ToolCallIdProblem tool_call_id_problem(const Entry& assistant, const ToolCallRef& call, bool used_before);

// ---- what a provider can take of a message's content ----

// A message with nothing a provider takes: no content array or string, or
// only blank text blocks (thinking counts unless `without_thinking`). pi-ai
// leaves such user and assistant messages out for some providers and sends
// them empty to others; an empty tool result goes to Anthropic as an empty
// text block.
bool has_nothing_to_send(const Entry& e, bool without_thinking = false);
// An assistant message pi-ai never sends (stopReason error or aborted).
bool is_skipped_assistant(const Entry& e);

}  // namespace pihydrate
