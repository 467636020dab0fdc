#!/usr/bin/env bash
# Benchmarks pi-hydrate on generated sessions and thread exports, next to
# `cat` and pi 0.78's own loader, and prints one table: wall, CPU time, peak
# RSS, MB/s, and the ratios to cat and to pi. Figures come from /usr/bin/time
# on whole processes, with the input in the page cache (each job runs once to
# warm up, then REPEAT times, default 3: the median wall, the median CPU time
# and the highest peak RSS). CPU time (user + system, all threads) moves less with a
# busy host than wall time does, so it is what to compare between two builds.
#
#   tools/bench.sh [SIZE] [SEED]        default 256M, seed 1; files go to build/bench/
#   PI_DEST=build/pi tools/bench.sh     where tests/conformance/install_pi.sh put pi
#                                       (skipped, with a note, when missing)
#   BIG_SIZE=1G tools/bench.sh          also validate and hydrate a session, and hydrate a thread
#                                       export, of this size: the memory bound on big files
#                                       (default 1G; BIG_SIZE=none: skip)
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-256M}
seed=${2:-1}
bin=${PI_HYDRATE:-build/pi-hydrate}
pi_dest=${PI_DEST:-build/pi}
dir=build/bench
mkdir -p "$dir"
session="$dir/session-$size-$seed.jsonl"
thread="$dir/thread-$size-$seed.json"
[ -f "$session" ] || python3 tools/gen_corpus.py --kind session --size "$size" --seed "$seed" -o "$session"
[ -f "$thread" ] || python3 tools/gen_corpus.py --kind thread --size "$size" --seed "$seed" -o "$thread"
big_size=${BIG_SIZE:-1G}
big="$dir/session-$big_size-$seed.jsonl"
big_thread="$dir/thread-$big_size-$seed.json"
if [ "$big_size" != none ]; then
  [ -f "$big" ] || python3 tools/gen_corpus.py --kind session --size "$big_size" --seed "$seed" -o "$big"
  [ -f "$big_thread" ] || python3 tools/gen_corpus.py --kind thread --size "$big_size" --seed "$seed" -o "$big_thread"
fi
[ -x "$bin" ] || { echo "bench.sh: build $bin first (cmake --build build)" >&2; exit 2; }

bytes=$(stat -L -c %s "$session")
entries=$(wc -l < "$session")
repeat=${REPEAT:-3}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
run() {  # run NAME INPUT CMD... -> "name|bytes|median wall_s|peak rss_kb|walls|entries read|median cpu_s"
  local name=$1 input=$2; shift 2
  # The output (the argument after -o), if any: removed before each timed
  # run, as in a fresh sandbox. Replacing an existing file would add the
  # kernel's freeing of the old file's pages to the job.
  local output="" prev=""
  for a in "$@"; do [ "$prev" = -o ] && output=$a; prev=$a; done
  cat "$input" > /dev/null
  "$@" > /dev/null 2> "$dir/warm-up.txt" || true
  # A hydration says how many entries it read: the memory bound counts them.
  local entries_read
  entries_read=$(sed -n 's/.* from \([0-9]*\) entries read.*/\1/p' "$dir/warm-up.txt" | tail -1)
  local walls=() cpus=() rss=0 wall kb user sys
  for ((k = 0; k < repeat; k++)); do
    [ -n "$output" ] && rm -f "$output"
    sync  # the last run's writeback must not land in this run's fsync
    cat "$input" > /dev/null  # this VM pages out files left alone for some seconds
    /usr/bin/time -o "$dir/time.txt" -f "%e %M %U %S" "$@" > /dev/null 2>&1 || true
    read -r wall kb user sys < <(tail -1 "$dir/time.txt")
    walls+=("$wall")
    cpus+=("$(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.2f", u + s}')")
    [ "$kb" -gt "$rss" ] && rss=$kb
  done
  echo "$name|$(stat -L -c %s "$input")|$(median "${walls[@]}")|$rss|${walls[*]}|${entries_read:-}|$(median "${cpus[@]}")"
}

rows=()
rows+=("$(run cat "$session" cat "$session")")
rows+=("$(run validate "$session" "$bin" validate "$session")")
rows+=("$(run 'hydrate --session' "$session" "$bin" --session "$session" --cwd /tmp -o "$dir/out-session.jsonl" --force)")
rows+=("$(run 'hydrate --thread' "$thread" "$bin" --thread "$thread" --cwd /tmp -o "$dir/out-thread.jsonl" --force)")
if [ "$big_size" != none ]; then
  rows+=("$(run "validate $big_size" "$big" "$bin" validate "$big")")
  rows+=("$(run "hydrate --session $big_size" "$big" "$bin" --session "$big" --cwd /tmp -o "$dir/out-big.jsonl" --force)")
  rows+=("$(run "hydrate --thread $big_size" "$big_thread" "$bin" --thread "$big_thread" --cwd /tmp -o "$dir/out-big-thread.jsonl" --force)")
fi
if [ -x "$pi_dest/node/bin/node" ]; then
  rows+=("$(run 'pi 0.78 load' "$session" "$pi_dest/node/bin/node" tests/conformance/pi_load.mjs --pi "$pi_dest/pi-0.78.0" --cwd /tmp --timeout 300 "$session")")
else
  echo "bench.sh: no pi in $pi_dest (run tests/conformance/install_pi.sh $pi_dest); the pi column is empty" >&2
fi

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "input: $session ($((bytes / 1048576)) MiB, $entries lines), seed $seed"
printf '%-24s %9s %9s %10s %9s %9s %9s %9s  %s\n' job wall_s cpu_s peak_MiB bound_MiB MB/s x_cat x_pi "runs (s)"
field() { echo "$1" | cut -d'|' -f"$2"; }
cat_s=$(field "${rows[0]}" 3)
pi_s=""
for r in "${rows[@]}"; do [[ $r == "pi 0.78 load|"* ]] && pi_s=$(field "$r" 3); done
for r in "${rows[@]}"; do
  awk -v n="$(field "$r" 1)" -v b="$(field "$r" 2)" -v w="$(field "$r" 3)" -v r="$(field "$r" 4)" \
      -v c="$cat_s" -v p="$pi_s" -v base="$bytes" -v runs="$(field "$r" 5)" -v e="$(field "$r" 6)" \
      -v cpu="$(field "$r" 7)" 'BEGIN {
    mbs = (w > 0) ? b / 1e6 / w : 0
    # Ratios only between inputs of about the same size (not for the big session).
    xc = (c > 0 && b < 1.1 * base) ? sprintf("%.1f", w / c) : "-"
    xp = (p != "" && w > 0 && b < 1.1 * base) ? sprintf("%.1f", p / w) : "-"
    # docs/performance.md, "Memory bounds": 64 MiB + 384 B per entry read to hydrate.
    bound = (n ~ /^hydrate/ && e != "") ? sprintf("%.1f", 64 + 384 * e / 1048576) : "-"
    printf "%-24s %9.2f %9.2f %10.1f %9s %9.0f %9s %9s  %s\n", n, w, cpu, r / 1024, bound, mbs, xc, xp, runs
  }'
done
echo "wall, cpu (user + system): medians of $repeat runs; peak: the highest of them; bound: a hydration's, 64 MiB plus 384 B per entry read (docs/performance.md)"
echo "x_cat: wall / cat's wall; x_pi: pi's wall / this wall (how many times faster than pi)"
