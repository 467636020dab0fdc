// Which branch to write: pi's own leaf, or the one --leaf / --label names.
#include <algorithm>
#include <string>
#include <unordered_map>

#include "hydrate/plan.h"

namespace pihydrate {
namespace {

void fail(HydrateReport& report, const SessionIndex& index, std::uint64_t line, std::string message, std::string hint) {
  Diagnostic d;
  d.code = Code::kBranchNotFound;  // the cycle overwrites it
  d.severity = Severity::kError;
  d.level = Level::kLoad;
  d.file = index.file;
  d.line = line;
  d.column = line ? 1 : 0;
  d.message = std::move(message);
  d.hint = std::move(hint);
  report.diagnostics.push_back(std::move(d));
}

}  // namespace

bool select_path(const SessionIndex& index, const PiView& view, const HydrateOptions& options,
                 std::vector<std::uint32_t>& path, HydrateReport& report) {
  const std::size_t n = view.nodes.size();
  std::int64_t leaf = view.leaf;
  auto id_of = [&](std::uint32_t node) -> std::string_view {
    const Entry& e = view.entry(index, node);
    return e.id.is_string() ? e.id.text() : std::string_view();
  };
  if (options.leaf_id || options.label) {
    if (view.migrates_v1) {
      fail(report, index, 0, "--leaf and --label need entry ids, and this v1 file has none (pi assigns random ones)",
           "hydrate the default branch, then pick a branch in the v3 output");
      return false;
    }
    std::string wanted;
    if (options.leaf_id) {
      wanted = *options.leaf_id;
    } else {
      // pi's labels: the last label entry per target wins; an empty label clears it.
      std::unordered_map<std::string, std::string> label_of;
      for (std::uint32_t i = 0; i < n; ++i) {
        const Entry& e = view.entry(index, i);
        if (e.root != JsonKind::kObject || e.type != EntryType::kLabel || !e.details().target_id.is_string()) continue;
        if (e.details().label.is_string() && !e.details().label.text().empty())
          label_of[std::string(e.details().target_id.text())] = std::string(e.details().label.text());
        else
          label_of.erase(std::string(e.details().target_id.text()));
      }
      std::vector<std::string> targets;
      for (const auto& [target, name] : label_of)
        if (name == *options.label) targets.push_back(target);
      if (targets.empty()) {
        fail(report, index, 0, "no entry carries the label " + quote_for_message(*options.label),
             "list labels with: grep '\"type\":\"label\"' FILE");
        return false;
      }
      if (targets.size() > 1) {
        fail(report, index, 0,
             "the label " + quote_for_message(*options.label) + " is on " + std::to_string(targets.size()) + " entries",
             "use --leaf ID to choose one");
        return false;
      }
      wanted = targets[0];
    }
    leaf = -1;
    for (std::uint32_t i = 0; i < n; ++i)
      if (id_of(i) == wanted) leaf = i;  // later wins, as in pi
    if (leaf < 0) {
      fail(report, index, 0, "no entry has the id " + quote_for_message(wanted),
           "check the id with pi-hydrate validate --level lint");
      return false;
    }
  }
  path.clear();
  if (leaf < 0) return true;  // an empty conversation
  std::vector<std::uint8_t> seen(n, 0);
  for (std::int64_t cur = leaf; cur >= 0; cur = view.parent[static_cast<std::size_t>(cur)]) {
    if (seen[static_cast<std::size_t>(cur)]) {
      fail(report, index, view.entry(index, static_cast<std::uint32_t>(cur)).line,
           "parentId links form a cycle on the branch to write", "run pi-hydrate validate for the cycle's lines");
      report.diagnostics.back().code = Code::kParentCycle;
      return false;
    }
    seen[static_cast<std::size_t>(cur)] = 1;
    path.push_back(static_cast<std::uint32_t>(cur));
  }
  std::reverse(path.begin(), path.end());
  return true;
}

}  // namespace pihydrate
