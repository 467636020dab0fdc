// IndexByKey against std::unordered_map, with ordinary hashes and with keys that all collide.
#include "core/index_by_key.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pihydrate {
namespace {

// Every key collides: probing alone must keep the keys apart.
struct CollidingHash {
  std::size_t operator()(std::string_view) const { return 7; }
};

// `made_for`: the number of keys the indexes are made for (0: they grow from their smallest).
template <typename Hash>
void expect_same_as_unordered_maps(std::uint32_t seed, std::size_t made_for) {
  std::mt19937 rng(seed);
  std::vector<std::string> keys;
  for (int i = 0; i < 2000; ++i) keys.push_back("id_" + std::to_string(rng() % 700));  // many repeats
  auto key_of = [&keys](std::uint32_t number) { return std::string_view(keys[number]); };
  IndexByKey<decltype(key_of), Hash> later_wins(made_for, key_of), first_wins(made_for, key_of);
  std::unordered_map<std::string, std::uint32_t> last, first;
  for (std::uint32_t i = 0; i < keys.size(); ++i) {
    later_wins.put(i);
    last[keys[i]] = i;
    const std::int64_t found = first_wins.put_if_absent(i);
    auto [it, added] = first.emplace(keys[i], i);
    ASSERT_EQ(found, added ? -1 : static_cast<std::int64_t>(it->second)) << keys[i];
  }
  for (const auto& [key, number] : last) EXPECT_EQ(later_wins.find(key), number) << key;
  for (const auto& [key, number] : first) EXPECT_EQ(first_wins.find(key), number) << key;
  EXPECT_EQ(later_wins.find("id_missing"), -1);
  EXPECT_EQ(first_wins.find(""), -1);
}

TEST(IndexByKeyTest, FindsWhatAnUnorderedMapFinds) {
  expect_same_as_unordered_maps<std::hash<std::string_view>>(3, 2000);
}

TEST(IndexByKeyTest, KeysThatAllCollideStayApart) { expect_same_as_unordered_maps<CollidingHash>(5, 2000); }

// Made for none, it grows to the 700 keys, each time placing its slots again.
TEST(IndexByKeyTest, GrowsAsKeysAreAdded) {
  expect_same_as_unordered_maps<std::hash<std::string_view>>(7, 0);
  expect_same_as_unordered_maps<CollidingHash>(9, 0);
}

}  // namespace
}  // namespace pihydrate
