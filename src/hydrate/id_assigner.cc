// Output ids and the references between entries.
//
// Original ids are kept when they are unique and valid; every other entry
// (v1 entries, synthetic ones, duplicates) gets an 8-hex id derived from the
// seed and its position, so the same input always gives the same bytes.
// References (compaction firstKeptEntryId, branch_summary fromId, label
// targetId) then name the new ids.
#include <cstdio>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "hydrate/plan.h"
#include "pihydrate/formats.h"

namespace pihydrate {
namespace {

std::string hex8(std::uint64_t h) {
  h ^= h >> 29;  // fold the high bits in
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(h & 0xffffffffu));
  return buf;
}

}  // namespace

void assign_ids(const SessionIndex& index, const PiView& view, Plan& plan, std::string_view seed) {
  std::unordered_set<std::string> used;
  std::vector<std::uint8_t> fresh(plan.entries.size(), 1);
  if (!view.migrates_v1) {
    for (std::size_t i = 0; i < plan.entries.size(); ++i) {
      PlannedEntry& p = plan.entries[i];
      if (p.node < 0) continue;
      const Entry& e = view.entry(index, static_cast<std::uint32_t>(p.node));
      if (!e.id.is_string() || !is_portable_id(e.id.text())) continue;
      if (!used.insert(std::string(e.id.text())).second) continue;  // a duplicate: the first keeps it
      p.id = std::string(e.id.text());
      fresh[i] = 0;
    }
  }
  for (std::size_t i = 0; i < plan.entries.size(); ++i) {
    if (!fresh[i]) continue;
    for (std::uint64_t attempt = 0;; ++attempt) {
      std::string id = hex8(stable_hash(std::to_string(i) + ":" + std::to_string(attempt), stable_hash(seed)));
      if (used.insert(id).second) {
        plan.entries[i].id = id;
        break;
      }
    }
  }
}

}  // namespace pihydrate
