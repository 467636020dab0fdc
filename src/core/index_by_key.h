// A map from keys to small numbers (node indices, positions in a vector)
// that stores no key: open addressing over the numbers, 8 bytes a slot, with
// each key read back through `key_of(number)`; it grows as keys are added.
// A hundred thousand string ids in a std::unordered_map cost a hash node and
// a string each, about 130 bytes; here they cost 16 to 32 bytes of slots and
// the keys stay where they are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace pihydrate {

template <typename KeyOf, typename Hash>
class IndexByKey {
 public:
  using Key = std::invoke_result_t<const KeyOf&, std::uint32_t>;

  // `numbers`: about how many keys it will hold (it grows past that).
  IndexByKey(std::size_t numbers, KeyOf key_of) : key_of_(key_of) {
    std::size_t capacity = 16;
    while (capacity < 2 * numbers) capacity <<= 1;
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
  }
  // Maps `number`'s key to it, replacing any earlier number with that key.
  void put(std::uint32_t number) {
    const Key key = key_of_(number);
    const auto hash = hash_of(key);
    Slot& slot = slots_[probe(key, hash)];
    const bool added = slot.number == kEmpty;
    slot.number = number;
    slot.hash = hash;
    if (added) grow_when_half_full();
  }
  // Maps `number`'s key to it unless the key is there already: returns the
  // number found then, or -1 when `number` was added.
  std::int64_t put_if_absent(std::uint32_t number) {
    const Key key = key_of_(number);
    const auto hash = hash_of(key);
    Slot& slot = slots_[probe(key, hash)];
    if (slot.number != kEmpty) return slot.number;
    slot.number = number;
    slot.hash = hash;
    grow_when_half_full();
    return -1;
  }
  // Starts loading the slot where `key` is, or would go, into the cache. A
  // table of many keys misses the cache on nearly every probe; a loop over
  // keys that asks for the one a few steps ahead waits for a few misses at
  // once instead of one after another.
  void prefetch(const Key& key) const { __builtin_prefetch(&slots_[hash_of(key) & mask_]); }
  // How many keys ahead such a loop asks for (a few misses in flight at once).
  static constexpr std::uint32_t kPrefetchAhead = 8;
  // The number with this key, or -1.
  std::int64_t find(const Key& key) const {
    const Slot& slot = slots_[probe(key, hash_of(key))];
    return slot.number == kEmpty ? -1 : static_cast<std::int64_t>(slot.number);
  }

 private:
  static constexpr std::uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    std::uint32_t number = kEmpty;
    std::uint32_t hash = 0;
  };
  static std::uint32_t hash_of(const Key& key) { return static_cast<std::uint32_t>(Hash()(key)); }
  // The slot holding `key`, or the empty slot where it would go.
  std::size_t probe(const Key& key, std::uint32_t hash) const {
    for (std::size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.number == kEmpty || (slot.hash == hash && key_of_(slot.number) == key)) return i;
    }
  }
  // Kept at most half full: probes stay short. The slots are placed again
  // by the hashes they keep, without reading a key.
  void grow_when_half_full() {
    if (2 * ++count_ <= slots_.size()) return;
    std::vector<Slot> old(2 * slots_.size());
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const Slot& slot : old) {
      if (slot.number == kEmpty) continue;
      std::size_t i = slot.hash & mask_;  // the keys are all different: the first empty slot
      while (slots_[i].number != kEmpty) i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }
  KeyOf key_of_;
  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t count_ = 0;  // keys held
};

}  // namespace pihydrate
