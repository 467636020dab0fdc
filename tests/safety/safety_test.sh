#!/usr/bin/env bash
# The writing guarantees of docs/hydrate.md, tested on the real binary:
# inputs are never modified, nothing partial or temporary is left behind on
# failure (bad input, disk full, a full stdout, SIGTERM), refusals (existing
# target, the input itself, a symlink) and mode 0600.
#   safety_test.sh PI_HYDRATE
set -u
bin=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'umount "$work/small" 2>/dev/null; rm -rf "$work"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
leftovers() { find "$1" -name '.pi-hydrate-*' | wc -l; }

session="$work/in.jsonl"
cp "$root/examples/session.jsonl" "$session"
thread="$work/t.json"
cp "$root/examples/thread.json" "$thread"
sum_before=$(sha256sum "$session" "$thread")

# Inputs are never modified, by any command.
"$bin" validate "$session" > /dev/null
"$bin" validate --level lint --format json "$session" > /dev/null
"$bin" --session "$session" --cwd "$work" -o "$work/out1.jsonl" 2> /dev/null
"$bin" --thread "$thread" --cwd "$work" -o "$work/out2.jsonl" 2> /dev/null
"$bin" --session "$session" --cwd "$work" -o - > /dev/null 2>&1
check "inputs unchanged after validate and hydrate" '[ "$(sha256sum "$session" "$thread")" = "$sum_before" ]'

# Created files are 0600: sessions hold secrets.
check "output mode is 0600" '[ "$(stat -c %a "$work/out1.jsonl")" = 600 ]'

# Refusals.
echo keep > "$work/existing.jsonl"
"$bin" --session "$session" --cwd "$work" -o "$work/existing.jsonl" 2> /dev/null
code=$?
check "existing target refused without --force (exit 2)" '[ $code -eq 2 ] && [ "$(cat "$work/existing.jsonl")" = keep ]'
"$bin" --session "$session" --cwd "$work" -o "$session" --force 2> /dev/null
code=$?
check "the input itself refused even with --force" '[ $code -eq 2 ] && [ "$(sha256sum "$session" "$thread")" = "$sum_before" ]'
ln -s "$work/elsewhere.jsonl" "$work/link.jsonl"
"$bin" --session "$session" --cwd "$work" -o "$work/link.jsonl" --force 2> /dev/null
code=$?
check "a symlink target refused (exit 2), nothing created behind it" '[ $code -eq 2 ] && [ ! -e "$work/elsewhere.jsonl" ]'
"$bin" --session "$session" --cwd "$work" -o "$work/existing.jsonl" --force 2> /dev/null
check "--force replaces an existing file" '[ "$(head -c 17 "$work/existing.jsonl")" = "{\"type\":\"session\"" ]'

# Bad input: exit 1, nothing written, no temporary file.
printf '{"type":"message"}\n' > "$work/noheader.jsonl"
"$bin" --session "$work/noheader.jsonl" --cwd "$work" -o "$work/out3.jsonl" 2> /dev/null
code=$?
check "bad input: exit 1, no output, no temporary file" '[ $code -eq 1 ] && [ ! -e "$work/out3.jsonl" ] && [ "$(leftovers "$work")" -eq 0 ]'
printf '{"format":"thread-export","version":2}' > "$work/bad.json"
"$bin" --thread "$work/bad.json" --cwd "$work" --session-dir "$work/sd" 2> /dev/null
code=$?
check "bad thread: exit 1, nothing in --session-dir" '[ $code -eq 1 ] && [ -z "$(ls -A "$work/sd" 2>/dev/null)" ]'

# Disk full: a 64 KiB tmpfs cannot hold the hydrated fixture.
mkdir -p "$work/small"
if mount -t tmpfs -o size=64k tmpfs "$work/small" 2> /dev/null; then
  big="$root/../shared/fixtures/pi-real/large-session.jsonl"
  [ -f "$big" ] || big="$thread"
  if [ "$big" = "$thread" ]; then
    "$bin" --thread "$big" --cwd "$work" -o "$work/small/out.jsonl" 2> "$work/err.txt"
  else
    "$bin" --session "$big" --cwd "$work" -o "$work/small/out.jsonl" 2> "$work/err.txt"
  fi
  code=$?
  check "disk full: exit 2, no partial output, no temporary file" '[ $code -eq 2 ] && [ ! -e "$work/small/out.jsonl" ] && [ "$(leftovers "$work/small")" -eq 0 ]'
  umount "$work/small"
else
  echo "skip: cannot mount a tmpfs here (disk-full case)"
fi

# A stdout that cannot be written: exit 2, no temporary file in TMPDIR.
mkdir -p "$work/tmp"
TMPDIR="$work/tmp" "$bin" --session "$session" --cwd "$work" -o - > /dev/full 2> /dev/null
code=$?
check "full stdout: exit 2, no temporary file" '[ $code -eq 2 ] && [ "$(leftovers "$work/tmp")" -eq 0 ]'

# SIGTERM in the middle of a large write: no output, no temporary file.
# The kill waits until the temporary file exists, so it lands mid-write.
python3 "$root/tools/gen_corpus.py" --kind session --size 160M --seed 3 -o "$work/big.jsonl"
mkdir -p "$work/sig"
"$bin" --session "$work/big.jsonl" --cwd "$work" -o "$work/sig/out.jsonl" 2> /dev/null &
pid=$!
for _ in $(seq 1 200); do [ "$(leftovers "$work/sig")" -gt 0 ] && break; sleep 0.01; done
kill -TERM $pid 2> /dev/null
wait $pid
code=$?
check "SIGTERM mid-write: killed by the signal (exit $code), no output, no temporary file" \
  '[ $code -eq 143 ] && [ ! -e "$work/sig/out.jsonl" ] && [ "$(leftovers "$work/sig")" -eq 0 ]'

echo "safety: $passed passed, $failed failed"
[ $failed -eq 0 ]
