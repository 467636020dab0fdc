#!/usr/bin/env bash
# Runs one libFuzzer target for a while.
#   tools/fuzz.sh TARGET SECONDS [JOBS]
# TARGET: fuzz_line_reader | fuzz_validate | fuzz_session_hydrate | fuzz_thread_hydrate | fuzz_thread_reader |
#         fuzz_transcript
# The build goes to build-fuzz/ (clang, -fsanitize=fuzzer,address,undefined).
# The seed corpus is tests/fuzz/corpus/TARGET plus every golden input; new
# inputs go to build-fuzz/corpus/TARGET, crashes to build-fuzz/crashes/TARGET.
# A crash that is fixed becomes a regression file in tests/fuzz/corpus/TARGET.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: tools/fuzz.sh TARGET SECONDS [JOBS]}
seconds=${2:?usage: tools/fuzz.sh TARGET SECONDS [JOBS]}
jobs=${3:-1}
command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ is needed (tools/install-deps.sh --fuzz)" >&2; exit 2; }
if [ ! -f build-fuzz/CMakeCache.txt ]; then
  CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIHYDRATE_FUZZ=ON \
    -DPIHYDRATE_BUILD_TESTS=OFF >/dev/null
fi
cmake --build build-fuzz --target "$target" -j "$(nproc)" >/dev/null
corpus=build-fuzz/corpus/$target
crashes=build-fuzz/crashes/$target
mkdir -p "$corpus" "$crashes"
# Seeds: the committed corpus and the golden inputs, once.
if [ -z "$(ls -A "$corpus")" ]; then
  cp tests/fuzz/corpus/"$target"/* "$corpus"/ 2>/dev/null || true
  find tests/golden -type f \( -name 'input*' -o -name '*.jsonl' -o -name '*.json' \) -size -1M |
    while read -r f; do cp "$f" "$corpus/golden-$(echo "$f" | md5sum | cut -c1-12)"; done
fi
parallel=()
[ "$jobs" -gt 1 ] && parallel=(-fork="$jobs")
exec build-fuzz/tests/fuzz/"$target" "$corpus" -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$crashes/" -print_final_stats=1 "${parallel[@]}"
