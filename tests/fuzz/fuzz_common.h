// Shared by the libFuzzer targets: sinks, the option byte that lets the
// fuzzer reach every policy, and the check of a hydration's carried strings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "common/index_summary.h"
#include "jobs/hydrate_job.h"
#include "pihydrate/hydrate.h"
#include "pihydrate/pihydrate.h"

namespace pihydrate::fuzz {

class CountingSink final : public LineSink {
 public:
  void write_line(std::string_view line) override { bytes += line.size() + 1; }
  std::size_t bytes = 0;
};

class CollectingSink final : public LineSink {
 public:
  void write_line(std::string_view line) override {
    text.append(line.data(), line.size());
    text += '\n';
  }
  std::string text;
};

// What a hydration says its output carries from its input must hold: each
// string is one of the input's long strings, byte for byte, and the output
// indexed with them known (as its verification does) is the output fully
// scanned.
inline void check_carried_strings(const std::string& input, const SessionIndex& input_index,
                                  const HydrateReport& report, const std::string& output) {
  std::set<std::string_view> input_strings;
  const LongStrings& in = input_index.long_strings;
  for (std::size_t k = 0; k < in.size(); ++k)
    input_strings.insert(std::string_view(input).substr(in.begin(k), in.length(k)));
  const LongStrings& carried = report.carried;
  for (std::size_t k = 0; k < carried.size(); ++k) {
    if (carried.begin(k) + carried.length(k) > output.size() || (k > 0 && carried.begin(k) <= carried.begin(k - 1)) ||
        input_strings.count(std::string_view(output).substr(carried.begin(k), carried.length(k))) == 0)
      __builtin_trap();
  }
  const KnownLongStrings known(carried);
  IndexOptions stepping;
  stepping.known_strings = &known;
  auto scanned = make_memory_source(output);
  auto stepped = make_memory_source(output);
  if (test_support::index_summary(build_session_index(*scanned, "out")) !=
      test_support::index_summary(build_session_index(*stepped, "out", stepping)))
    __builtin_trap();
}

// The first input byte picks options; the rest is the file.
inline HydrateRequest request_from(std::uint8_t bits) {
  HydrateRequest r;
  r.cwd = "/tmp";
  r.tools = (bits & 1) ? ToolPolicy::kFlatten : ToolPolicy::kPair;
  r.thinking = (bits & 2) ? ThinkingPolicy::kDrop : ThinkingPolicy::kKeep;
  r.prune_compacted = (bits & 4) != 0;
  r.pi_version = (bits & 8) ? PiVersion::k0_78 : PiVersion::k1_5;
  r.flatten_max_chars = (bits & 16) ? 8 : 4000;
  r.limits.max_depth = 64;  // keeps the recursive parser's stack small under ASan
  return r;
}

// The same, as the hydrator's options.
inline HydrateOptions options_from(std::uint8_t bits) { return hydrate_options(request_from(bits)); }

}  // namespace pihydrate::fuzz
