// References between written entries: compaction firstKeptEntryId,
// branch_summary fromId and label targetId must name entries of the output.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "hydrate/plan.h"
#include "pi/nodes_by_id.h"

namespace pihydrate {

void resolve_references(const SessionIndex& index, const PiView& view, Plan& plan, HydrateReport& report) {
  // String ids only: later wins, as in pi.
  auto key_of = [&](std::uint32_t node) { return js_map_key(view.entry(index, node).id); };
  NodesById<decltype(key_of)> node_of_id(view.migrates_v1 ? 0 : view.nodes.size(), key_of);
  if (!view.migrates_v1)
    for (std::uint32_t n = 0; n < view.nodes.size(); ++n)
      if (view.entry(index, n).id.is_string()) node_of_id.put(n);

  // Labels whose target is not written are dropped first, so that nothing
  // (a compaction anchor) ends up naming them.
  std::vector<std::uint8_t> drop(plan.entries.size(), 0);
  constexpr std::int64_t kNotWritten = -1;
  std::vector<std::int64_t> plan_index_of_node(view.nodes.size(), kNotWritten);
  for (std::size_t i = 0; i < plan.entries.size(); ++i)
    if (plan.entries[i].node >= 0)
      plan_index_of_node[static_cast<std::size_t>(plan.entries[i].node)] = static_cast<std::int64_t>(i);
  auto plan_index_of = [&](std::int64_t node) {
    return node < 0 ? kNotWritten : plan_index_of_node[static_cast<std::size_t>(node)];
  };
  auto plan_index_for_id = [&](const Field& f) -> std::int64_t {
    if (!f.is_string()) return -1;
    return plan_index_of(node_of_id.find(JsMapKey{JsonKind::kString, f.text()}));
  };
  for (std::size_t i = 0; i < plan.entries.size(); ++i) {
    PlannedEntry& p = plan.entries[i];
    if (p.node < 0) continue;
    const Entry& e = view.entry(index, static_cast<std::uint32_t>(p.node));
    if (e.root != JsonKind::kObject || e.type != EntryType::kLabel) continue;
    p.ref_target = plan_index_for_id(e.details().target_id);
    if (p.ref_target >= 0) continue;
    drop[i] = 1;
    report.repairs["dropped-label-off-branch"]++;
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
  for (std::size_t i = 0; i < plan.entries.size(); ++i)
    if (drop[i]) plan_index_of_node[static_cast<std::size_t>(plan.entries[i].node)] = kNotWritten;

  // v1 firstKeptEntryIndex names a kept position; positions grow with the
  // node, so the node at one is found by binary search (a hash map of every
  // node would be built to look up a few).
  auto node_at_kept_position = [&view](std::uint32_t at) -> std::int64_t {
    const auto& positions = view.node_kept_position;
    const auto it = std::lower_bound(positions.begin(), positions.end(), at);
    return it != positions.end() && *it == at ? it - positions.begin() : -1;
  };
  for (std::size_t i = 0; i < plan.entries.size(); ++i) {
    PlannedEntry& p = plan.entries[i];
    if (p.node < 0 || drop[i]) continue;
    const Entry& e = view.entry(index, static_cast<std::uint32_t>(p.node));
    if (e.root == JsonKind::kObject && e.type == EntryType::kCompaction) {
      // The latest compaction keeps what pi keeps; an entry pi would not find
      // becomes a self-anchor ("keep nothing before me"), which pi reads the same way.
      std::int64_t target = -1;
      if (p.node == view.compaction && plan.first_kept_override >= 0) {
        target = plan_index_of(plan.first_kept_override);
      } else if (p.node == view.compaction && view.first_kept_found) {
        if (view.migrates_v1) {
          bool found = false;
          for (std::uint32_t node : view.path) {
            if (node == view.compaction) break;
            found = found || static_cast<std::int64_t>(node) == view.first_kept_index_target;
            if (!found) continue;
            target = plan_index_of(node);
            if (target >= 0) break;
          }
        } else {
          // The first kept entry, or, when it is not written (an orphan result,
          // a label whose target is gone), the next written entry after it.
          bool found = false;
          for (std::uint32_t node : view.path) {
            if (node == view.compaction) break;
            const Entry& c = view.entry(index, node);
            found = found || (c.id.kind == e.details().first_kept_entry_id.kind &&
                              c.id.text() == e.details().first_kept_entry_id.text());
            if (!found) continue;
            target = plan_index_of(node);
            if (target >= 0) break;
          }
        }
      } else if (p.node != view.compaction && view.migrates_v1) {
        // An older compaction of a v1 file: its index, if it points before it.
        const Field& fki = e.details().first_kept_entry_index;
        std::uint32_t own = view.node_kept_position[static_cast<std::size_t>(p.node)];
        if (fki.kind == JsonKind::kNumber) {
          double at = std::strtod(std::string(fki.text()).c_str(), nullptr);
          if (at >= 0 && at < own && at == static_cast<double>(static_cast<std::uint64_t>(at))) {
            const std::int64_t node = node_at_kept_position(static_cast<std::uint32_t>(at));
            if (node >= 0) target = plan_index_of(node);
          }
        }
      } else if (p.node != view.compaction) {
        target = plan_index_for_id(e.details().first_kept_entry_id);
      }
      p.ref_target = target;
      p.ref_self = target < 0;
      const bool was_self = e.details().first_kept_entry_id.is_string() && e.id.is_string() &&
                            e.details().first_kept_entry_id.text() == e.id.text();
      if (p.ref_self && p.node == view.compaction && view.first_kept_found && !was_self)
        report.repairs["compaction-self-anchored"]++;
    } else if (e.root == JsonKind::kObject && e.type == EntryType::kBranchSummary) {
      p.ref_target = plan_index_for_id(e.details().from_id);
    }
  }
  // Dropping labels shifts plan indices: map old to new, compacting in place
  // (a second vector of the plan would be the hydration's biggest copy).
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

}  // namespace pihydrate
