#!/usr/bin/env bash
# The table of docs/performance.md ("Measured"): each job of the rows below on
# its generated input, RUNS times after a warm-up (default 3), the outputs on
# tmpfs, printing the minimum and median wall time and the highest peak RSS;
# beside each, the floor (one RapidJSON pass over the input on one core,
# json-pass) and, for context and tree, pi 1.5.2 loading the same session and
# building its request (tools/bench/pi_context.mjs). A benchmark, not a
# test: it asserts nothing.
#
#   tools/bench-rows.sh                  inputs in build/bench-rows/ (generated once, a few GiB)
#   PI_DEST=build/pi tools/bench-rows.sh where tests/conformance/install_pi.sh put pi (else no pi row)
#   PI_HYDRATE=path RUNS=5 tools/bench-rows.sh
#   PI_ROW=0 tools/bench-rows.sh         without the pi row
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-3}
bin=${PI_HYDRATE:-build/pi-hydrate}
pi_dest=${PI_DEST:-build/pi}
dir=build/bench-rows
mkdir -p "$dir"
[ -x "$bin" ] || { echo "bench-rows.sh: build $bin first (cmake --build build)" >&2; exit 2; }
# json-pass from the build tree the binary is in (build/ by default).
build_dir=$(dirname "$bin")
cmake "$build_dir" > /dev/null  # configured again: an older build tree has no rule for json-pass
cmake --build "$build_dir" --target json-pass > /dev/null ||
  { echo "bench-rows.sh: building json-pass in $build_dir failed" >&2; exit 2; }
json_pass=$build_dir/json-pass

input() {  # input KIND SIZE EXT -> the file's path, generated once
  local f=$dir/$1-$2.$3
  [ -f "$f" ] || python3 tools/gen_corpus.py --kind "$1" --size "$2" --seed 1 -o "$f"
  echo "$f"
}
shm=$(mktemp -d /dev/shm/bench-rows.XXXXXX)
trap 'rm -rf "$shm"' EXIT
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

printf '%-34s %9s %8s %8s %9s %8s %8s\n' job input_MB min_s med_s peak_MiB floor_s x_floor
row() {  # row NAME INPUT CMD...   (@OUT@: the output file, on tmpfs)
  local name=$1 in=$2; shift 2
  local args=() a walls=() rss=0 wall kb floor i
  for a in "$@"; do args+=("${a//@OUT@/$shm/out}"); done
  cat "$in" > /dev/null
  "${args[@]}" > /dev/null 2>&1 || true
  for ((i = 0; i < runs; i++)); do
    rm -f "$shm/out"
    /usr/bin/time -o "$shm/time" -f '%e %M' "${args[@]}" > /dev/null 2>&1 || true
    read -r wall kb < <(tail -1 "$shm/time")
    walls+=("$wall")
    [ "$kb" -gt "$rss" ] && rss=$kb
  done
  floor=$(for i in 1 2 3; do "$json_pass" "$in" 2> /dev/null | awk '$5 == "(0" {print $1}'; done | sort -g | head -1)
  awk -v n="$name" -v b="$(stat -L -c %s "$in")" -v min="$(printf '%s\n' "${walls[@]}" | sort -g | head -1)" \
      -v med="$(median "${walls[@]}")" -v k="$rss" -v f="${floor:-}" 'BEGIN {
    printf "%-34s %9.0f %8.2f %8.2f %9.1f %8s %8s\n", n, b / 1e6, min, med, k / 1024,
      (f != "" ? sprintf("%.2f", f) : "-"), (f > 0 ? sprintf("%.1f", min / f) : "-")
  }'
}

hydrate=(--cwd /tmp -o @OUT@ --force)
codex=$(input codex 256M jsonl)
small=$(input session-small 176M jsonl)
claude=$(input claude-code 256M jsonl)
events=$(input events 32M jsonl)
session=$(input session 256M jsonl)
chunky=$(input thread-chunky 296M json)
row "--session of a Codex rollout" "$codex" "$bin" --session "$codex" "${hydrate[@]}"
row "context, short chained messages" "$small" "$bin" context "$small"
row "tree, short chained messages" "$small" "$bin" tree "$small"
if [ "${PI_ROW:-1}" = 1 ] && [ -x "$pi_dest/node/bin/node" ] && [ -d "$pi_dest/pi-1.5.2" ]; then
  # The session is v3: pi opens it without migrating (rewriting) it.
  row "pi 1.5.2 load + context, the same" "$small" "$pi_dest/node/bin/node" tools/bench/pi_context.mjs \
    "$pi_dest/pi-1.5.2" "$small"
else
  echo "bench-rows.sh: no pi 1.5.2 in $pi_dest (tests/conformance/install_pi.sh $pi_dest): no pi row" >&2
fi
row "--session of a Claude Code transcript" "$claude" "$bin" --session "$claude" "${hydrate[@]}"
row "--events" "$events" "$bin" --events "$events" "${hydrate[@]}"
row "--session of a pi session" "$session" "$bin" --session "$session" "${hydrate[@]}"
row "validate, the same" "$session" "$bin" validate "$session"
row "--thread, chunk-heavy mirror" "$chunky" "$bin" --thread "$chunky" "${hydrate[@]}"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo);" \
  "commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- 2> /dev/null || echo ' (with uncommitted changes)'); $(date -u +%F)"
echo "min, med: wall seconds of $runs runs after a warm-up, outputs on tmpfs; peak: the highest peak RSS;"
echo "floor: one RapidJSON pass over the input on one core (json-pass); x_floor: min / floor"
