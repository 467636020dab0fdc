#!/usr/bin/env bash
# The static pi-hydrate (docs/install.md): no dynamic section, runs in an
# empty environment (env -i), and prints and writes byte for byte what the
# dynamic build does: examples/thread.json and examples/session.jsonl
# hydrated and validated, and every golden input.
#   static_test.sh STATIC DYNAMIC SOURCE_DIR
set -u
static=$1 dynamic=$2 source=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

check "file says statically linked: $(file -b "$static" | cut -d, -f1-4)" "file -b '$static' | grep -q 'statically linked'"
check "ldd says not a dynamic executable" "ldd '$static' 2>&1 | grep -q 'not a dynamic executable'"
mkdir -p "$work/cwd"
check "it hydrates examples/thread.json under env -i" \
  "env -i '$static' --thread '$source/examples/thread.json' --cwd '$work/cwd' -o '$work/env-i.jsonl' 2>/dev/null && [ -s '$work/env-i.jsonl' ]"

# same NAME ARGS...: stdout, stderr and exit code of both, under env -i.
same() {
  local name=$1
  shift
  env -i "$static" "$@" > "$work/s.out" 2> "$work/s.err"
  echo $? >> "$work/s.out"
  env -i "$dynamic" "$@" > "$work/d.out" 2> "$work/d.err"
  echo $? >> "$work/d.out"
  if cmp -s "$work/s.out" "$work/d.out" && cmp -s "$work/s.err" "$work/d.err"; then
    ok "byte-identical: $name"
  else
    bad "byte-identical: $name"
    diff "$work/s.out" "$work/d.out" | head -5
    diff "$work/s.err" "$work/d.err" | head -5
  fi
}
same "--version" --version
same "--thread examples/thread.json" --thread "$source/examples/thread.json" --cwd "$work/cwd" -o -
same "--session examples/session.jsonl" --session "$source/examples/session.jsonl" --cwd "$work/cwd" -o -
same "validate examples/session.jsonl" validate "$source/examples/session.jsonl"
# Every golden input, through its group's command (a validate case is
# validated as lint-level JSON, a hydrate or thread case hydrated): the
# differences a libc or libstdc++ could make (number text, locale, sorting,
# paths) would show in one of them.
golden_same=0
golden_diff=""
for input in "$source"/tests/golden/*/*/input.json "$source"/tests/golden/*/*/input.jsonl; do
  [ -f "$input" ] || continue
  case "$input" in
    */golden/validate/*) runs=("validate --format json --level lint $input") ;;
    *.json) runs=("--thread $input --cwd $work/cwd -o -") ;;
    *) runs=("--session $input --cwd $work/cwd -o -") ;;
  esac
  for run in "${runs[@]}"; do
    # shellcheck disable=SC2086  # the run is words
    env -i "$static" $run > "$work/s.out" 2> "$work/s.err"
    echo $? >> "$work/s.out"
    # shellcheck disable=SC2086
    env -i "$dynamic" $run > "$work/d.out" 2> "$work/d.err"
    echo $? >> "$work/d.out"
    if cmp -s "$work/s.out" "$work/d.out" && cmp -s "$work/s.err" "$work/d.err"; then
      golden_same=$((golden_same + 1))
    else
      golden_diff+=" [$run]"
    fi
  done
done
check "byte-identical on $golden_same runs over the golden inputs${golden_diff}" "[ -z '$golden_diff' ] && [ $golden_same -gt 200 ]"

echo "static_binary: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
