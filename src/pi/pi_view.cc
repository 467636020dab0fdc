// pi's loader, as data: which lines pi keeps, migration, the leaf, the parent walk and the context.
#include "pihydrate/pi_view.h"

#include "pi/nodes_by_id.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <unordered_map>

namespace pihydrate {

JsMapKey js_map_key(const Field& f) {
  JsonKind kind = f.kind == JsonKind::kArray ? JsonKind::kObject : f.kind;
  return {kind, f.text()};
}

namespace {

bool truthy(const Field& f) {
  switch (f.kind) {
    case JsonKind::kMissing:
    case JsonKind::kNull:
    case JsonKind::kFalse: return false;
    case JsonKind::kString: return !f.text().empty();
    case JsonKind::kNumber: return std::strtod(std::string(f.text()).c_str(), nullptr) != 0.0;
    default: return true;
  }
}

// `header.details().version ?? 1`, then compared with numbers the way JavaScript does.
double js_version(const Field& f) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (f.kind) {
    case JsonKind::kMissing:
    case JsonKind::kNull: return 1;
    case JsonKind::kTrue: return 1;
    case JsonKind::kFalse: return 0;
    case JsonKind::kNumber: return std::strtod(std::string(f.text()).c_str(), nullptr);
    case JsonKind::kString: {
      std::string s(f.text());
      std::size_t b = s.find_first_not_of(" \t\r\n");
      if (b == std::string::npos) return 0;  // Number("") === 0
      std::size_t e = s.find_last_not_of(" \t\r\n");
      s = s.substr(b, e - b + 1);
      char* end = nullptr;
      double v = std::strtod(s.c_str(), &end);
      return (end && *end == '\0') ? v : nan;
    }
    default: return nan;
  }
}

bool is_object_of_type(const Entry& e, EntryType type) { return e.root == JsonKind::kObject && e.type == type; }

Role llm_role_of(const Entry& e, const PiView& view) {
  Role role = e.role;
  if (role == Role::kHookMessage && view.migrates_v2) role = Role::kCustom;
  switch (role) {
    case Role::kUser:
    case Role::kAssistant:
    case Role::kToolResult: return role;
    case Role::kCustom:
    case Role::kBranchSummary:
    case Role::kCompactionSummary: return Role::kUser;
    case Role::kBashExecution: return e.exclude_from_context ? Role::kNone : Role::kUser;
    case Role::kSystem: return view.profile().sends_system_messages ? Role::kSystem : Role::kNone;
    default: return Role::kNone;
  }
}

// Stops the load: pi crashes, refuses or replaces the file at `line`.
void fail(PiView& v, LoadOutcome outcome, std::string failure, std::uint64_t line) {
  v.outcome = outcome;
  v.failure = std::move(failure);
  v.failure_line = line;
}

// 1. Lines pi keeps: a BOM spoils line 1 unless the file is trimmed
// first; falsy values are kept or not (see PiProfile).
void keep_lines(const SessionIndex& index, bool ignore_bom, PiView& v) {
  const PiProfile& pi = v.profile();
  for (std::uint32_t i = 0; i < index.entries.size(); ++i) {
    const Entry& e = index.entries[i];
    if (!pi.trims_file_before_parsing && !ignore_bom && e.line == 1 && index.starts_with_bom) continue;
    if (!pi.keeps_falsy_lines && e.falsy) continue;
    v.kept.push_back(i);
  }
}

// 2. The header check: the first kept value must be
// {"type":"session","id":string}, and (some versions) no kept value may be
// null. False when pi does not load the file.
bool check_header(const SessionIndex& index, PiView& v) {
  const PiProfile& pi = v.profile();
  if (index.file_size == 0) {
    fail(v, LoadOutcome::kFreshSession, "the file is empty; pi writes a fresh session header into it", 0);
    return false;
  }
  if (v.kept.empty() || index.entries[v.kept[0]].root != JsonKind::kObject ||
      index.entries[v.kept[0]].type != EntryType::kSession || !index.entries[v.kept[0]].id.is_string()) {
    if (pi.crashes_on_null_line && !v.kept.empty() && index.entries[v.kept[0]].root == JsonKind::kNull) {
      fail(v, LoadOutcome::kCrash, "TypeError: Cannot read properties of null (reading 'type')",
           index.entries[v.kept[0]].line);
      return false;
    }
    const std::uint64_t line = v.kept.empty() ? 0 : index.entries[v.kept[0]].line;
    if (pi.replaces_file_without_header)
      fail(v, LoadOutcome::kReplaced,
           std::string("pi ") + pi.name + " finds no valid session header and replaces the file with a fresh session",
           line);
    else
      fail(v, LoadOutcome::kRefused, "Session file is not a valid pi session", line);
    return false;
  }
  v.header = v.kept[0];
  if (pi.crashes_on_null_line) {
    for (std::uint32_t i : v.kept) {
      if (index.entries[i].root == JsonKind::kNull) {
        fail(v, LoadOutcome::kCrash, "TypeError: Cannot read properties of null (reading 'type')",
             index.entries[i].line);
        return false;
      }
    }
  }
  return true;
}

// 3. Version and migration (migrateToCurrentVersion). False when pi
// crashes migrating.
bool read_version(const SessionIndex& index, PiView& v) {
  const Entry& header = index.entries[static_cast<std::size_t>(v.header)];
  v.version_missing = !header.details().version.present();
  v.header_version = js_version(header.details().version);
  v.migrates_v1 = v.header_version < 2;
  v.migrates_v2 = v.header_version < 3;
  v.rewrites_file = !(v.header_version >= 3);
  if (!v.migrates_v1) return true;
  for (std::uint32_t i : v.kept) {
    const Entry& e = index.entries[i];
    if (e.root != JsonKind::kObject) {  // entry.id = … on a primitive throws in strict mode
      fail(v, LoadOutcome::kCrash, std::string("TypeError: Cannot create property 'id' on ") + json_kind_name(e.root),
           e.line);
      return false;
    }
  }
  return true;
}

// 4. The tree: every kept non-session value, in file order, linked to its
// parent by id (later ids win, as in pi's Map); a v1 file is one chain.
void build_tree(const SessionIndex& index, PiView& v) {
  for (std::uint32_t k = 0; k < v.kept.size(); ++k) {
    if (!is_object_of_type(index.entries[v.kept[k]], EntryType::kSession)) {
      v.nodes.push_back(v.kept[k]);
      v.node_kept_position.push_back(k);
    }
  }
  const std::size_t n = v.nodes.size();
  v.parent.assign(n, -1);
  v.link.assign(n, ParentLink::kRoot);
  v.shadowed.assign(n, 0);
  if (v.migrates_v1) {
    for (std::size_t i = 1; i < n; ++i) {
      v.parent[i] = static_cast<std::int64_t>(i - 1);
      v.link[i] = ParentLink::kLinked;
    }
    return;
  }
  auto key_of = [&](std::uint32_t node) { return js_map_key(v.entry(index, node).id); };
  NodesById<decltype(key_of)> by_id(n, key_of);
  constexpr std::uint32_t kAhead = decltype(by_id)::kPrefetchAhead;  // see IndexByKey::prefetch
  for (std::uint32_t i = 0; i < n; ++i) {
    if (i + kAhead < n) by_id.prefetch(key_of(i + kAhead));
    by_id.put(i);  // later wins
  }
  for (std::uint32_t i = 0; i < n; ++i) {
    if (i + kAhead < n) by_id.prefetch(key_of(i + kAhead));  // its parent's is nearly always loaded already
    const Entry& e = v.entry(index, i);
    if (by_id.find(js_map_key(e.id)) != i) v.shadowed[i] = 1;
    if (!truthy(e.parent_id)) continue;
    const std::int64_t parent = by_id.find(js_map_key(e.parent_id));
    if (parent < 0) {
      v.link[i] = ParentLink::kDangling;
    } else {
      v.link[i] = ParentLink::kLinked;
      v.parent[i] = parent;
    }
  }
}

// 5. The leaf is the last entry, whatever its type; an id of null means
// "before the first entry" and gives an empty context. False when there is
// no leaf to walk from.
bool find_leaf(const SessionIndex& index, PiView& v) {
  const std::size_t n = v.nodes.size();
  if (n == 0) return false;
  if (!v.migrates_v1 && v.entry(index, static_cast<std::uint32_t>(n - 1)).id.kind == JsonKind::kNull) {
    v.leaf_is_null = true;
    return false;
  }
  v.leaf = static_cast<std::int64_t>(n - 1);
  return true;
}

// 6. The parent walk. pi has no cycle check: it loops forever, or grows
// an array until V8 throws. False then.
bool walk_to_root(const SessionIndex& index, PiView& v) {
  const PiProfile& pi = v.profile();
  std::vector<std::uint8_t> seen(v.nodes.size(), 0);
  for (std::int64_t cur = v.leaf; cur >= 0; cur = v.parent[static_cast<std::size_t>(cur)]) {
    if (seen[static_cast<std::size_t>(cur)]) {
      v.cycle_node = cur;
      fail(v, pi.hangs_on_parent_cycle ? LoadOutcome::kHang : LoadOutcome::kCrash,
           pi.hangs_on_parent_cycle ? std::string("the parentId walk never ends (pi ") + pi.name + " hangs)"
                                    : "RangeError: Invalid array length",
           v.entry(index, static_cast<std::uint32_t>(cur)).line);
      v.path.clear();
      return false;
    }
    seen[static_cast<std::size_t>(cur)] = 1;
    v.path.push_back(static_cast<std::uint32_t>(cur));
  }
  std::reverse(v.path.begin(), v.path.end());
  return true;
}

}  // namespace

PiView build_pi_view(const SessionIndex& index, PiVersion version, bool ignore_bom) {
  PiView v;
  v.version = version;
  keep_lines(index, ignore_bom, v);
  if (!check_header(index, v) || !read_version(index, v)) return v;
  build_tree(index, v);
  if (!find_leaf(index, v) || !walk_to_root(index, v)) return v;
  // 7. Context (buildSessionContext).
  rebuild_context(index, v);
  return v;
}

namespace {

// pi reads the settings along the path first, where a message entry without
// a message object throws; the latest compaction on it. False on the throw.
bool find_compaction(const SessionIndex& index, PiView& v) {
  for (std::uint32_t node : v.path) {
    const Entry& e = v.entry(index, node);
    if (is_object_of_type(e, EntryType::kMessage) &&
        (e.message.kind == JsonKind::kMissing || e.message.kind == JsonKind::kNull)) {
      v.outcome = LoadOutcome::kCrash;
      v.context.clear();
      v.failure = std::string("TypeError: Cannot read properties of ") +
                  (e.message.kind == JsonKind::kNull ? "null" : "undefined") + " (reading 'role')";
      v.failure_line = e.line;
      return false;
    }
    if (is_object_of_type(e, EntryType::kCompaction)) v.compaction = node;
  }
  return true;
}

// A path entry's message in the context: a message, a custom message, a
// branch summary with a truthy summary; other entries give none.
void append_context_item(const SessionIndex& index, PiView& v, std::uint32_t node) {
  const Entry& e = v.entry(index, node);
  if (e.root != JsonKind::kObject) return;
  ContextItem item;
  item.node = node;
  if (e.type == EntryType::kMessage) {
    item.kind = ContextKind::kMessage;
    item.llm_role = e.message.kind == JsonKind::kObject ? llm_role_of(e, v) : Role::kNone;
  } else if (e.type == EntryType::kCustomMessage) {
    item.kind = ContextKind::kCustomMessage;
    item.llm_role = Role::kUser;
  } else if (e.type == EntryType::kBranchSummary && truthy(e.details().summary)) {
    item.kind = ContextKind::kBranchSummary;
    item.llm_role = Role::kUser;
  } else {
    return;
  }
  v.context.push_back(item);
}

// pi looks the compaction up again by id: the path position of the first
// compaction with its id. After a v1 migration every id is fresh and
// unique, so that finds the compaction itself.
std::size_t compaction_position(const SessionIndex& index, const PiView& v) {
  const JsMapKey comp_key = js_map_key(v.entry(index, static_cast<std::uint32_t>(v.compaction)).id);
  std::size_t at = 0;
  while (at < v.path.size() &&
         !(v.migrates_v1 ? static_cast<std::int64_t>(v.path[at]) == v.compaction
                         : is_object_of_type(v.entry(index, v.path[at]), EntryType::kCompaction) &&
                               js_map_key(v.entry(index, v.path[at]).id) == comp_key))
    ++at;
  return at;
}

// After a v1 migration the only way to name the first kept entry is
// firstKeptEntryIndex pointing at an earlier entry: its node, or -1.
std::int64_t v1_first_kept_node(const Entry& comp, PiView& v) {
  std::int64_t first_kept_node = -1;
  const Field& fki = comp.details().first_kept_entry_index;
  if (fki.kind != JsonKind::kNumber) return first_kept_node;
  double idx = std::strtod(std::string(fki.text()).c_str(), nullptr);
  std::uint32_t comp_kept_pos = v.node_kept_position[static_cast<std::size_t>(v.compaction)];
  if (idx >= 0 && idx == std::floor(idx) && idx < comp_kept_pos) {
    std::uint32_t target_entry = v.kept[static_cast<std::size_t>(idx)];
    for (std::uint32_t node = 0; node < v.nodes.size(); ++node) {
      if (v.nodes[node] == target_entry) first_kept_node = node;
    }
    v.first_kept_index_target = first_kept_node;
  }
  return first_kept_node;
}

}  // namespace

void rebuild_context(const SessionIndex& index, PiView& v) {
  v.compaction = -1;
  v.first_kept_found = false;
  v.first_kept_index_target = -1;
  v.context.clear();
  if (!find_compaction(index, v)) return;
  if (v.compaction < 0) {
    for (std::uint32_t node : v.path) append_context_item(index, v, node);
    return;
  }
  // The summary, then the kept entries before the compaction (from the one
  // firstKeptEntryId names), then the entries after it.
  const Entry& comp = v.entry(index, static_cast<std::uint32_t>(v.compaction));
  v.context.push_back(
      ContextItem{static_cast<std::uint32_t>(v.compaction), ContextKind::kCompactionSummary, Role::kUser});
  const std::size_t comp_idx = compaction_position(index, v);
  const std::int64_t first_kept_node = v.migrates_v1 ? v1_first_kept_node(comp, v) : -1;
  const JsMapKey kept_key = js_map_key(comp.details().first_kept_entry_id);
  bool found = false;
  for (std::size_t i = 0; i < comp_idx; ++i) {
    std::uint32_t node = v.path[i];
    if (v.migrates_v1 ? static_cast<std::int64_t>(node) == first_kept_node
                      : js_map_key(v.entry(index, node).id) == kept_key)
      found = true;
    if (found) append_context_item(index, v, node);
  }
  v.first_kept_found = found;
  for (std::size_t i = comp_idx + 1; i < v.path.size(); ++i) append_context_item(index, v, v.path[i]);
}

}  // namespace pihydrate
