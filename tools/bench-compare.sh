#!/usr/bin/env bash
# Compares the current tree's pi-hydrate with another commit's on the same
# generated inputs: is this change slower, or heavier, than the main before it?
# Builds REV in a git worktree under build/bench-compare/ (RelWithDebInfo,
# the flags of tools/test.sh; a build already there is reused), builds the
# current tree in build/, generates inputs of several shapes with
# tools/gen_corpus.py, then runs each job with both binaries, alternating
# OLD and NEW, RUNS times each after a warm-up of each, the outputs on tmpfs.
# Prints per job the minimum and median wall time and the highest peak RSS of
# each binary, and NEW/OLD; beside each, the floor: one RapidJSON pass over
# the input on one core (json-pass), and NEW's minimum over it. A benchmark,
# not a test: it asserts nothing.
#
#   tools/bench-compare.sh [REV]   REV: any commit; default main~1 (the commit before main's head,
#                                  first parent), or HEAD~1 without a main branch
#   SIZE=256M tools/bench-compare.sh   the inputs' size (default 64M; gen_corpus.py's --size)
#   RUNS=10 tools/bench-compare.sh     timed runs of each binary per job (default 5)
#   PI_HYDRATE=path tools/bench-compare.sh   the NEW binary to use as it is (not built)
#   ONLY='gemini|qwen' tools/bench-compare.sh  only the jobs whose name matches this extended regex
set -euo pipefail
cd "$(dirname "$0")/.."
size=${SIZE:-64M}
runs=${RUNS:-5}
only=${ONLY:-}
seed=1
if [ $# -ge 1 ]; then
  rev=$1
elif git rev-parse -q --verify main~1 > /dev/null; then
  rev=main~1
else
  rev=HEAD~1
fi
sha=$(git rev-parse --verify "$rev^{commit}")
short=$(git rev-parse --short "$sha")
dir=build/bench-compare
mkdir -p "$dir/inputs"

# OLD: REV's tree in a worktree of its own, built once.
old_tree=$dir/$short
old_build=$old_tree/build
old=$old_build/pi-hydrate
if [ ! -x "$old" ]; then
  [ -d "$old_tree" ] || git worktree add --detach "$old_tree" "$sha" > /dev/null
  cmake -S "$old_tree" -B "$old_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIHYDRATE_WERROR=ON > /dev/null
  cmake --build "$old_build" -j "$(nproc)" --target pi-hydrate > "$dir/build-$short.log" ||
    { echo "bench-compare.sh: building $rev failed: $dir/build-$short.log" >&2; exit 2; }
fi
# NEW: the current tree, built in build/ as tools/test.sh builds it.
new=${PI_HYDRATE:-build/pi-hydrate}
if [ -z "${PI_HYDRATE:-}" ]; then
  [ -f build/CMakeCache.txt ] || cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIHYDRATE_WERROR=ON > /dev/null
  cmake --build build -j "$(nproc)" --target pi-hydrate > "$dir/build-current.log" ||
    { echo "bench-compare.sh: building the current tree failed: $dir/build-current.log" >&2; exit 2; }
fi
# Configured again: a build/ made before json-pass existed has no rule for it.
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIHYDRATE_WERROR=ON > /dev/null
cmake --build build --target json-pass > "$dir/build-json-pass.log" ||
  { echo "bench-compare.sh: building json-pass failed: $dir/build-json-pass.log" >&2; exit 2; }
json_pass=build/json-pass

# The inputs, generated once per size by the current tree's generator.
input() {  # input KIND EXT -> the file's path
  local f=$dir/inputs/$1-$size-$seed.$2
  [ -f "$f" ] || python3 tools/gen_corpus.py --kind "$1" --size "$size" --seed "$seed" -o "$f"
  echo "$f"
}
big=$(input session-big jsonl)
small=$(input session-small jsonl)
mixed=$(input session jsonl)
v1=$(input session-v1 jsonl)
codex=$(input codex jsonl)
thread=$(input thread json)
chunky=$(input thread-chunky json)
raw=$(input thread-raw json)
events=$(input events jsonl)
claude=$(input claude-code jsonl)
gemini=$(input gemini-cli jsonl)
qwen=$(input qwen-code jsonl)

# Outputs go to tmpfs: disk writeback makes the runs' times bimodal.
shm=$(mktemp -d /dev/shm/bench-compare.XXXXXX)
trap 'rm -rf "$shm"' EXIT
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
min() { printf '%s\n' "$@" | sort -g | head -1; }
max() { printf '%s\n' "$@" | sort -g | tail -1; }

once() {  # once BIN ARGS... -> "wall_s rss_kb exit_status"; the output (-o) in $shm/out, stdout and stderr beside it
  local bin=$1 status=0; shift
  local args=() a
  for a in "$@"; do args+=("${a//@OUT@/$shm/out}"); done
  rm -f "$shm/out"  # written fresh, as in a sandbox
  # time writes its figures to a file of its own, apart from the command's stderr.
  /usr/bin/time -o "$shm/time" -f '%e %M' "$bin" "${args[@]}" > "$shm/stdout" 2> "$shm/stderr" || status=$?
  echo "$(tail -1 "$shm/time") $status"
}
keep() {  # keep WHICH: the last run's output, stdout and stderr, to compare
  local f
  for f in out stdout stderr; do rm -f "$shm/$1.$f"; [ ! -f "$shm/$f" ] || mv "$shm/$f" "$shm/$1.$f"; done
}

printf '%-24s %8s %8s %8s  %8s %8s %8s  %6s %6s %6s  %6s %7s  %s\n' job old_min old_med old_MiB new_min new_med \
  new_MiB min_x med_x rss_x floor floor_x output
job() {  # job NAME INPUT ARGS...   (@OUT@ in ARGS: the output file)
  local name=$1 in=$2; shift 2
  [ -z "$only" ] || [[ $name =~ $only ]] || return 0
  local ow=() nw=() orss=() nrss=() w k i f which note old_exit new_exit floor
  cat "$in" > /dev/null
  # The floor: the best of three RapidJSON passes (none for a database).
  floor=$(for i in 1 2 3; do "$json_pass" "$in" 2> /dev/null | awk '$5 == "(0" {print $1}'; done | sort -g | head -1)
  # A warm-up of each, which also tells whether both write the same bytes.
  read -r w k old_exit < <(once "$old" "$@")
  keep old
  read -r w k new_exit < <(once "$new" "$@")
  keep new
  local differ=()
  for f in out stdout stderr; do
    [ ! -f "$shm/old.$f" ] && [ ! -f "$shm/new.$f" ] && continue
    cmp -s "$shm/old.$f" "$shm/new.$f" || differ+=("$f")
  done
  note=same
  [ ${#differ[@]} -eq 0 ] || note="differ: ${differ[*]}"
  # 1: the input has errors (said on stderr); 2 and above: usage or I/O, or a crash.
  [ "$old_exit$new_exit" = 00 ] || note="exit $old_exit/$new_exit, $note"
  for ((i = 0; i < runs; i++)); do
    # Alternate which goes first, so neither always runs after the other.
    for which in $( ((i % 2 == 0)) && echo old new || echo new old); do
      if [ "$which" = old ]; then
        read -r w k _ < <(once "$old" "$@")
        ow+=("$w"); orss+=("$k")
      else
        read -r w k _ < <(once "$new" "$@")
        nw+=("$w"); nrss+=("$k")
      fi
    done
  done
  awk -v n="$name" -v omin="$(min "${ow[@]}")" -v omed="$(median "${ow[@]}")" -v ok="$(max "${orss[@]}")" \
      -v nmin="$(min "${nw[@]}")" -v nmed="$(median "${nw[@]}")" -v nk="$(max "${nrss[@]}")" -v note="$note" \
      -v floor="${floor:-}" 'BEGIN {
    printf "%-24s %8.2f %8.2f %8.1f  %8.2f %8.2f %8.1f  %6s %6s %6s  %6s %7s  %s\n", n, omin, omed, ok / 1024, nmin, nmed,
      nk / 1024, (omin > 0 ? sprintf("%.2f", nmin / omin) : "-"), (omed > 0 ? sprintf("%.2f", nmed / omed) : "-"),
      (ok > 0 ? sprintf("%.2f", nk / ok) : "-"), (floor != "" ? sprintf("%.2f", floor) : "-"),
      (floor > 0 ? sprintf("%.1f", nmin / floor) : "-"), note
  }'
}

hydrate=(--cwd /tmp -o @OUT@ --force)
job "--session big entries" "$big" --session "$big" "${hydrate[@]}"
job "--session small entries" "$small" --session "$small" "${hydrate[@]}"
job "--session mixed" "$mixed" --session "$mixed" "${hydrate[@]}"
job "--session v1" "$v1" --session "$v1" "${hydrate[@]}"
job "--session codex" "$codex" --session "$codex" "${hydrate[@]}"
job "--thread" "$thread" --thread "$thread" "${hydrate[@]}"
job "--thread chunk-heavy" "$chunky" --thread "$chunky" "${hydrate[@]}"
job "--thread raw entries" "$raw" --thread "$raw" "${hydrate[@]}"
job "--events" "$events" --events "$events" "${hydrate[@]}"
job "--session claude-code" "$claude" --session "$claude" "${hydrate[@]}"
job "--session gemini-cli" "$gemini" --session "$gemini" "${hydrate[@]}"
job "--session qwen-code" "$qwen" --session "$qwen" "${hydrate[@]}"
job "validate big entries" "$big" validate "$big"
job "validate small entries" "$small" validate "$small"
job "context small entries" "$small" context "$small"
job "context mixed" "$mixed" context "$mixed"
job "tree small entries" "$small" tree --width 0 "$small"
job "tree mixed" "$mixed" tree --width 0 "$mixed"
echo "OLD: $rev ($short, $old); NEW: the current tree ($new)$(git diff --quiet HEAD -- 2> /dev/null || echo ', with uncommitted changes')"
echo "inputs: $dir/inputs/*-$size-$seed.*; $runs runs of each after a warm-up, alternating; outputs on tmpfs"
echo "min, med: wall seconds; MiB: the highest peak RSS; *_x: NEW/OLD (below 1: NEW is faster or lighter);"
echo "floor: seconds of one RapidJSON pass over the input on one core (json-pass); floor_x: new_min / floor"
echo "output: same when both wrote the same bytes and stderr in the warm-up"
