// A map from ids to PiView nodes for a whole session, later nodes replacing
// earlier ones with the same key (pi's byId Map).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pihydrate/pi_view.h"

namespace pihydrate {

// Open addressing over node indices: 8 bytes a slot, against a hash node
// per id; keys are read back through `key_of(node)`, so nothing is copied.
template <typename KeyOfNode>
class NodesById {
 public:
  NodesById(std::size_t nodes, KeyOfNode key_of) : key_of_(key_of) {
    std::size_t capacity = 16;
    while (capacity < 2 * nodes) capacity <<= 1;
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
  }
  void put(std::uint32_t node) {
    const JsMapKey key = key_of_(node);
    const auto hash = static_cast<std::uint32_t>(JsMapKeyHash()(key));
    Slot& slot = slots_[probe(key, hash)];
    slot.node = node;
    slot.hash = hash;
  }
  // The node with this id, or -1.
  std::int64_t find(const JsMapKey& key) const {
    const Slot& slot = slots_[probe(key, static_cast<std::uint32_t>(JsMapKeyHash()(key)))];
    return slot.node == kEmpty ? -1 : static_cast<std::int64_t>(slot.node);
  }

 private:
  static constexpr std::uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    std::uint32_t node = kEmpty;
    std::uint32_t hash = 0;
  };
  // The slot holding `key`, or the empty slot where it would go.
  std::size_t probe(const JsMapKey& key, std::uint32_t hash) const {
    for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.node == kEmpty || (slot.hash == hash && key_of_(slot.node) == key)) return i;
    }
  }
  KeyOfNode key_of_;
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
};

}  // namespace pihydrate
