// Output ids and the references between entries.
//
// Original ids are kept when they are unique and valid; every other entry
// (v1 entries, synthetic ones, duplicates) gets an 8-hex id derived from the
// seed and its position, so the same input always gives the same bytes.
// References (compaction firstKeptEntryId, branch_summary fromId, label
// targetId) then name the new ids.
#include <functional>
#include <string>
#include <string_view>

#include "core/index_by_key.h"
#include "hydrate/plan.h"
#include "pihydrate/formats.h"

namespace pihydrate {

void assign_ids(const SessionIndex& index, const PiView& view, Plan& plan, std::string_view seed) {
  // The ids given so far, each read back from its entry: a flat table
  // rather than a set of strings, which allocated a node and a string per id.
  auto id_of = [&plan](std::uint32_t i) { return std::string_view(plan.entries[i].id); };
  IndexByKey<decltype(id_of), std::hash<std::string_view>> used(plan.entries.size(), id_of);
  std::vector<std::uint8_t> fresh(plan.entries.size(), 1);
  if (!view.migrates_v1) {
    // The id a few entries ahead, whose slot is loaded while this one's is used (see IndexByKey::prefetch).
    constexpr std::size_t kAhead = decltype(used)::kPrefetchAhead;
    auto prefetch = [&](std::size_t i) {
      if (i < plan.entries.size() && plan.entries[i].node >= 0)
        if (const Field& id = view.entry(index, static_cast<std::uint32_t>(plan.entries[i].node)).id; id.is_string())
          used.prefetch(id.text());
    };
    for (std::size_t i = 0; i < plan.entries.size(); ++i) {
      prefetch(i + kAhead);
      PlannedEntry& p = plan.entries[i];
      if (p.node < 0) continue;
      const Entry& e = view.entry(index, static_cast<std::uint32_t>(p.node));
      if (!e.id.is_string() || !is_portable_id(e.id.text())) continue;
      p.id = std::string(e.id.text());
      if (used.put_if_absent(static_cast<std::uint32_t>(i)) >= 0) {
        p.id.clear();  // a duplicate: the first keeps it
        continue;
      }
      fresh[i] = 0;
    }
  }
  const std::uint64_t seed_hash = stable_hash(seed);
  for (std::size_t i = 0; i < plan.entries.size(); ++i) {
    if (!fresh[i]) continue;
    for (std::uint64_t attempt = 0;; ++attempt) {
      plan.entries[i].id = hex8_id(stable_hash(std::to_string(i) + ":" + std::to_string(attempt), seed_hash));
      if (used.put_if_absent(static_cast<std::uint32_t>(i)) < 0) break;
    }
  }
}

}  // namespace pihydrate
