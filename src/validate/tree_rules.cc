// Ids, parents, cycles and the leaf.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <unordered_map>

#include "validate/rules.h"

namespace pihydrate {
namespace {

std::string id_text(const Field& f) {
  if (f.is_string()) return quoted(f.text());
  if (f.kind == JsonKind::kNumber) return std::string(f.text()) + " (a number)";
  return json_kind_name(f.kind);
}

// parentId values JavaScript treats as "no parent": the walk stops there.
bool falsy_parent(const Field& f) {
  return f.kind == JsonKind::kFalse || (f.kind == JsonKind::kString && f.text().empty()) ||
         (f.kind == JsonKind::kNumber && std::strtod(std::string(f.text()).c_str(), nullptr) == 0.0);
}

bool on_path(const PiView& v, std::vector<std::uint8_t>& mask, std::uint32_t node) {
  if (mask.empty()) {
    mask.assign(v.nodes.size(), 0);
    for (std::uint32_t p : v.path) mask[p] = 1;
  }
  return mask[node] != 0;
}

// Cycles anywhere in the parent graph. The one on the leaf's walk stops pi
// from loading; the others hang pi when someone navigates to them.
void check_cycles(RuleContext& ctx) {
  const PiView& v = ctx.view;
  const std::size_t n = v.nodes.size();
  std::vector<std::uint8_t> state(n, 0);  // 0 new, 1 on the current walk, 2 done
  for (std::size_t start = 0; start < n; ++start) {
    if (state[start]) continue;
    std::vector<std::uint32_t> walk;
    std::int64_t cur = static_cast<std::int64_t>(start);
    while (cur >= 0 && state[static_cast<std::size_t>(cur)] == 0) {
      state[static_cast<std::size_t>(cur)] = 1;
      walk.push_back(static_cast<std::uint32_t>(cur));
      cur = v.parent[static_cast<std::size_t>(cur)];
    }
    if (cur >= 0 && state[static_cast<std::size_t>(cur)] == 1) {
      // The cycle is the part of `walk` from `cur` on. Report it at its first line.
      std::vector<std::uint32_t> cycle;
      bool in = false;
      for (std::uint32_t node : walk) {
        in = in || node == static_cast<std::uint32_t>(cur);
        if (in) cycle.push_back(node);
      }
      std::sort(cycle.begin(), cycle.end());  // file order reads best
      std::uint32_t first = cycle.front();
      bool blocks_load = false;
      for (std::uint32_t node : cycle) blocks_load = blocks_load || static_cast<std::int64_t>(node) == v.cycle_node;
      const Entry& e = ctx.node_entry(first);
      std::string lines;
      for (std::size_t i = 0; i < cycle.size() && i < 5; ++i) {
        lines += (i ? ", " : "") + std::to_string(ctx.node_line(cycle[i]));
      }
      if (cycle.size() > 5) lines += ", ... (" + std::to_string(cycle.size()) + " entries)";
      std::string what =
          cycle.size() == 1 ? "this entry is its own parent" : "parentId links form a cycle through lines " + lines;
      if (blocks_load) {
        ctx.report(Code::kParentCycle, Severity::kError, e.line, e.parent_id.column,
                   what + ": the last entry's parent walk never reaches a root, so " + ctx.pi_name() +
                       (ctx.pi().hangs_on_parent_cycle ? " hangs" : " crashes (RangeError: Invalid array length)"),
                   "point the parentId of the cycle's oldest entry at its real parent (or null for the first entry)");
      } else {
        ctx.report_at_level(Code::kParentCycle, Severity::kWarning, Level::kResume, e.line, e.parent_id.column,
                            what + ": it is not on the resumed branch, but pi hangs if anyone navigates to it",
                            "point the parentId of the cycle's oldest entry at its real parent");
      }
    }
    for (std::uint32_t node : walk) state[node] = 2;
  }
}

void check_ids_and_parents(RuleContext& ctx) {
  const PiView& v = ctx.view;
  std::vector<std::uint8_t> path_mask;
  // Where each shadowed id reappears, for the message.
  // Built on the first shadowed id only: most files have none.
  std::unordered_map<JsMapKey, std::uint32_t, JsMapKeyHash> last_with_id;
  auto later_with_id = [&](const Field& id) {
    if (last_with_id.empty()) {
      for (std::uint32_t i = 0; i < v.nodes.size(); ++i) {
        const Entry& e = ctx.node_entry(i);
        if (e.id.is_string() || e.id.kind == JsonKind::kNumber) last_with_id[js_map_key(e.id)] = i;
      }
    }
    return last_with_id[js_map_key(id)];
  };
  for (std::uint32_t i = 0; i < v.nodes.size(); ++i) {
    const Entry& e = ctx.node_entry(i);
    if (e.root != JsonKind::kObject) continue;
    const bool last = i + 1 == v.nodes.size();
    if (e.id.kind == JsonKind::kNull && last) {
      ctx.report(Code::kMissingId, Severity::kError, e.line, e.id.column,
                 "the last entry's id is null: pi reads that as \"before the first entry\" and resumes an empty "
                 "conversation",
                 "give the entry a unique 8-hex id");
    } else if (!e.id.is_string() && e.id.kind != JsonKind::kNumber) {
      ctx.report(Code::kMissingId, Severity::kWarning, e.line, e.id.present() ? e.id.column : 1,
                 std::string("entry has ") +
                     (e.id.present() ? "an id that is " + std::string(json_kind_name(e.id.kind)) : "no id") +
                     ": no other entry can name it as its parent",
                 "give the entry a unique 8-hex id");
    } else if (v.shadowed[i]) {
      std::uint32_t later = later_with_id(e.id);
      ctx.report(Code::kDuplicateId, Severity::kError, e.line, e.id.column,
                 "id " + id_text(e.id) + " is used again on line " + std::to_string(ctx.node_line(later)) +
                     ": pi keeps only the later entry, so this one drops out of the tree and its children hang "
                     "under line " +
                     std::to_string(ctx.node_line(later)),
                 "give one of the two entries a fresh id and fix the parentIds that meant it");
    }
    const bool first = i == 0;
    const bool active = !v.path.empty() && on_path(v, path_mask, i);
    if (falsy_parent(e.parent_id) || (!e.parent_id.present() && !first)) {
      if (!first) {
        ctx.report(
            Code::kDanglingParent, active ? Severity::kError : Severity::kWarning, e.line,
            e.parent_id.present() ? e.parent_id.column : 1,
            (e.parent_id.present() ? "parentId " + id_text(e.parent_id) + " counts as \"no parent\" in JavaScript"
                                   : std::string("entry has no parentId")) +
                ": pi treats this entry as a root" +
                (active ? ", so the resumed conversation starts here and the entries before it are lost"
                        : " (it is not on the resumed branch)"),
            "point parentId at the entry this one follows");
      }
    }
    if (v.link[i] == ParentLink::kDangling) {
      // The first entry has nothing before it to lose (a parentId naming the
      // header is a common hand-written mistake).
      bool loses = active && !first;
      ctx.report(Code::kDanglingParent, loses ? Severity::kError : Severity::kWarning, e.line, e.parent_id.column,
                 "parentId " + id_text(e.parent_id) + " names no entry: pi treats this entry as a root" +
                     (loses   ? ", so the resumed conversation starts here and everything before it is lost"
                      : first ? " (it is the first entry, so nothing is lost)"
                              : " (it is not on the resumed branch)"),
                 "point parentId at the entry this one follows");
    }
  }
}

void check_unversioned_tree(RuleContext& ctx) {
  const PiView& v = ctx.view;
  if (v.header < 0 || !v.version_missing || !v.migrates_v1) return;
  // Does the body carry its own tree? Then it was written as v2/v3.
  bool has_tree = false, linear = true;
  std::string prev_id;
  bool have_prev = false;
  for (std::uint32_t i = 0; i < v.nodes.size(); ++i) {
    const Entry& e = ctx.node_entry(i);
    if (e.id.is_string()) has_tree = true;
    bool follows_prev = have_prev ? (e.parent_id.is_string() && e.parent_id.text() == prev_id)
                                  : (e.parent_id.kind == JsonKind::kNull || !e.parent_id.present());
    if (!follows_prev) linear = false;
    prev_id = std::string(e.id.text());
    have_prev = true;
  }
  if (!has_tree) return;
  const Entry& h = ctx.index.entries[static_cast<std::size_t>(v.header)];
  if (linear) {
    ctx.report(Code::kUnversionedTree, Severity::kWarning, h.line, 1,
               "the entries carry ids and parentIds, but the header has no version: pi treats the file as v1 and "
               "replaces every id (the chain is linear, so the context is unchanged)",
               "add \"version\":3 to the header");
  } else {
    ctx.report(Code::kUnversionedTree, Severity::kError, h.line, 1,
               "the entries form a tree, but the header has no version: pi treats the file as v1, chains every entry "
               "in file order, and abandoned branches become part of the resumed context",
               "add \"version\":3 to the header");
  }
}

void check_leaf(RuleContext& ctx) {
  const PiView& v = ctx.view;
  if (!v.loads() || v.path.empty()) return;
  std::int64_t latest = -1;  // the last message in file order
  for (std::int64_t i = static_cast<std::int64_t>(v.nodes.size()) - 1; i >= 0; --i) {
    const Entry& e = ctx.node_entry(i);
    if (e.root == JsonKind::kObject && e.type == EntryType::kMessage) {
      latest = i;
      break;
    }
  }
  if (latest < 0) return;
  for (std::uint32_t p : v.path)
    if (static_cast<std::int64_t>(p) == latest) return;
  const Entry& last = ctx.node_entry(v.leaf);
  if (last.root != JsonKind::kObject) return;  // PH008 says why the context is empty
  ctx.report(Code::kLeafOffLatestBranch, Severity::kWarning, last.line,
             last.parent_id.present() ? last.parent_id.column : 1,
             "the last entry makes pi resume a branch that does not contain the latest message (line " +
                 std::to_string(ctx.node_line(latest)) + ")",
             "if that is not intended, append entries to the latest branch instead (parentId = the latest entry)");
}

void check_branching(RuleContext& ctx) {
  if (!ctx.options.linear) return;
  const PiView& v = ctx.view;
  for (std::uint32_t i = 0; i < v.nodes.size(); ++i) {
    const Entry& e = ctx.node_entry(i);
    std::int64_t expected = static_cast<std::int64_t>(i) - 1;
    if (v.parent[i] == expected) continue;
    if (v.link[i] == ParentLink::kDangling) continue;  // reported as PH203
    std::string what = v.parent[i] < 0 ? "entry starts a new root"
                                       : "entry continues from line " + std::to_string(ctx.node_line(v.parent[i])) +
                                             ", not from the entry before it";
    ctx.report(Code::kBranching, Severity::kError, e.line, e.parent_id.present() ? e.parent_id.column : 1,
               what + ": the file branches (--linear)", "set parentId to the id of the previous entry");
  }
}

}  // namespace

void check_tree_rules(RuleContext& ctx) {
  if (ctx.view.header < 0) return;
  check_unversioned_tree(ctx);
  if (ctx.view.migrates_v1) return;  // pi regenerates ids and chains the entries
  check_cycles(ctx);
  check_ids_and_parents(ctx);
  check_leaf(ctx);
  check_branching(ctx);
}

}  // namespace pihydrate
