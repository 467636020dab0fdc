// References between written entries: compaction firstKeptEntryId,
// branch_summary fromId and label targetId must name entries of the output.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "hydrate/plan.h"
#include "pi/nodes_by_id.h"

namespace pihydrate {
namespace {

constexpr std::int64_t kNotWritten = -1;

// Where each source node is written: its plan index, found by node or by
// the id a reference names (string ids only: later wins, as in pi). The
// table of ids is made when the first id is looked up: most sessions name
// no entry by id (no compaction, branch summary or label), and a table of
// every id costs a cache miss an entry.
class WrittenAt {
 public:
  WrittenAt(const SessionIndex& index, const PiView& view, const Plan& plan)
      : index_(index), view_(view), plan_index_of_node_(view.nodes.size(), kNotWritten) {
    for (std::size_t i = 0; i < plan.entries.size(); ++i)
      if (plan.entries[i].node >= 0)
        plan_index_of_node_[static_cast<std::size_t>(plan.entries[i].node)] = static_cast<std::int64_t>(i);
  }

  // The plan index of `node`, or kNotWritten.
  std::int64_t node(std::int64_t node) const {
    return node < 0 ? kNotWritten : plan_index_of_node_[static_cast<std::size_t>(node)];
  }
  // The plan index of the node a string id names, or kNotWritten.
  std::int64_t id(const Field& f) {
    if (!f.is_string()) return kNotWritten;
    return node(ids().find(JsMapKey{JsonKind::kString, f.text()}));
  }
  void forget(std::int64_t node) { plan_index_of_node_[static_cast<std::size_t>(node)] = kNotWritten; }

 private:
  struct KeyOf {
    const SessionIndex* index;
    const PiView* view;
    JsMapKey operator()(std::uint32_t node) const { return js_map_key(view->entry(*index, node).id); }
  };
  const NodesById<KeyOf>& ids() {
    if (node_of_id_) return *node_of_id_;
    const KeyOf key_of{&index_, &view_};
    node_of_id_.emplace(view_.migrates_v1 ? 0 : view_.nodes.size(), key_of);
    if (view_.migrates_v1) return *node_of_id_;
    constexpr std::uint32_t kAhead = NodesById<KeyOf>::kPrefetchAhead;  // see IndexByKey::prefetch
    const auto n = static_cast<std::uint32_t>(view_.nodes.size());
    for (std::uint32_t node = 0; node < n; ++node) {
      if (node + kAhead < n) node_of_id_->prefetch(key_of(node + kAhead));
      if (view_.entry(index_, node).id.is_string()) node_of_id_->put(node);
    }
    return *node_of_id_;
  }
  const SessionIndex& index_;
  const PiView& view_;
  std::optional<NodesById<KeyOf>> node_of_id_;
  std::vector<std::int64_t> plan_index_of_node_;
};

void warn_label_dropped(const SessionIndex& index, const Entry& e, HydrateReport& report) {
  Diagnostic d;
  d.code = Code::kLabelTargetMissing;
  d.severity = Severity::kWarning;
  d.level = Level::kResume;
  d.file = index.file;
  d.line = e.line;
  d.column = e.details().target_id.present() ? e.details().target_id.column : 1;
  d.message =
      "dropped the label: its target " +
      (e.details().target_id.is_string() ? quote_for_message(e.details().target_id.text()) : std::string("(none)")) +
      " is not on the written branch";
  report.diagnostics.push_back(std::move(d));
}

// Labels name their target (targetId); those whose target is not written
// are dropped (hydrate.md, Writing). They are dropped first, so that
// nothing (a compaction anchor) ends up naming them; a label of a dropped
// label goes too, until none is left naming what is not written. Per plan
// entry: dropped.
std::vector<std::uint8_t> drop_labels_off_branch(const SessionIndex& index, const PiView& view, Plan& plan,
                                                 WrittenAt& written, HydrateReport& report) {
  std::vector<std::uint8_t> drop(plan.entries.size(), 0);
  for (bool dropped_one = true; dropped_one;) {
    dropped_one = false;
    for (std::size_t i = 0; i < plan.entries.size(); ++i) {
      PlannedEntry& p = plan.entries[i];
      if (p.node < 0 || drop[i]) continue;
      const Entry& e = view.entry(index, static_cast<std::uint32_t>(p.node));
      if (e.root != JsonKind::kObject || e.type != EntryType::kLabel) continue;
      p.ref_target = written.id(e.details().target_id);
      if (p.ref_target >= 0) continue;
      drop[i] = 1;
      written.forget(p.node);
      dropped_one = true;
      report.repairs["dropped-label-off-branch"]++;
      warn_label_dropped(index, e, report);
    }
  }
  return drop;
}

// R9, the latest compaction: the entry pi keeps first, or, when it is not
// written (an orphan result, a label whose target is gone), the next written
// entry after it. kNotWritten when none is.
std::int64_t first_kept_written(const SessionIndex& index, const PiView& view, const Entry& compaction,
                                const WrittenAt& written) {
  const Field& kept_id = compaction.details().first_kept_entry_id;
  bool found = false;
  for (std::uint32_t node : view.path) {
    if (node == view.compaction) break;
    if (view.migrates_v1) {
      found = found || static_cast<std::int64_t>(node) == view.first_kept_index_target;
    } else {
      const Entry& c = view.entry(index, node);
      found = found || (c.id.kind == kept_id.kind && c.id.text() == kept_id.text());
    }
    if (!found) continue;
    const std::int64_t target = written.node(node);
    if (target >= 0) return target;
  }
  return kNotWritten;
}

// An older compaction of a v1 file: the entry at its firstKeptEntryIndex,
// if that points before it. Positions grow with the node, so the node at
// one is found by binary search (a hash map of every node would be built
// to look up a few).
std::int64_t older_v1_kept_written(const PiView& view, const PlannedEntry& p, const Entry& compaction,
                                   const WrittenAt& written) {
  const Field& fki = compaction.details().first_kept_entry_index;
  const std::uint32_t own = view.node_kept_position[static_cast<std::size_t>(p.node)];
  if (fki.kind != JsonKind::kNumber) return kNotWritten;
  const double at = std::strtod(std::string(fki.text()).c_str(), nullptr);
  if (!(at >= 0 && at < own && at == static_cast<double>(static_cast<std::uint64_t>(at)))) return kNotWritten;
  const auto& positions = view.node_kept_position;
  const auto it = std::lower_bound(positions.begin(), positions.end(), static_cast<std::uint32_t>(at));
  if (it == positions.end() || *it != static_cast<std::uint32_t>(at)) return kNotWritten;
  return written.node(it - positions.begin());
}

// R9 (the output id): the entry a compaction's firstKeptEntryId names in
// the output. The latest compaction keeps what pi keeps; an entry pi would
// not find becomes a self-anchor ("keep nothing before me"), which pi reads
// the same way.
void anchor_compaction(const SessionIndex& index, const PiView& view, const Plan& plan, WrittenAt& written,
                       const Entry& e, PlannedEntry& p, HydrateReport& report) {
  const bool latest = p.node == view.compaction;
  std::int64_t target = kNotWritten;
  if (latest && plan.first_kept_override >= 0) {
    target = written.node(plan.first_kept_override);
  } else if (latest && view.first_kept_found) {
    target = first_kept_written(index, view, e, written);
  } else if (!latest && view.migrates_v1) {
    target = older_v1_kept_written(view, p, e, written);
  } else if (!latest) {
    target = written.id(e.details().first_kept_entry_id);
  }
  p.ref_target = target;
  p.ref_self = target < 0;
  const bool was_self = e.details().first_kept_entry_id.is_string() && e.id.is_string() &&
                        e.details().first_kept_entry_id.text() == e.id.text();
  if (p.ref_self && latest && view.first_kept_found && !was_self) report.repairs["compaction-self-anchored"]++;
}

// Dropping labels shifts plan indices: map old to new, compacting in place
// (a second vector of the plan would be the hydration's biggest copy).
void remove_dropped(const std::vector<std::uint8_t>& drop, Plan& plan) {
  std::vector<std::int64_t> new_index(plan.entries.size(), -1);
  std::size_t kept = 0;
  for (std::size_t i = 0; i < plan.entries.size(); ++i) {
    if (drop[i]) continue;
    new_index[i] = static_cast<std::int64_t>(kept);
    if (kept != i) plan.entries[kept] = std::move(plan.entries[i]);
    ++kept;
  }
  plan.entries.resize(kept);
  for (PlannedEntry& p : plan.entries)
    if (p.ref_target >= 0) p.ref_target = new_index[static_cast<std::size_t>(p.ref_target)];
}

}  // namespace

void resolve_references(const SessionIndex& index, const PiView& view, Plan& plan, HydrateReport& report) {
  WrittenAt written(index, view, plan);
  const std::vector<std::uint8_t> drop = drop_labels_off_branch(index, view, plan, written, report);
  for (std::size_t i = 0; i < plan.entries.size(); ++i) {
    PlannedEntry& p = plan.entries[i];
    if (p.node < 0 || drop[i]) continue;
    const Entry& e = view.entry(index, static_cast<std::uint32_t>(p.node));
    if (e.root != JsonKind::kObject) continue;
    if (e.type == EntryType::kCompaction) {
      anchor_compaction(index, view, plan, written, e, p, report);
    } else if (e.type == EntryType::kBranchSummary) {
      p.ref_target = written.id(e.details().from_id);  // a branch summary's fromId
    }
  }
  remove_dropped(drop, plan);
}

}  // namespace pihydrate
