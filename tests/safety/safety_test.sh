#!/usr/bin/env bash
# The writing guarantees of docs/hydrate.md and docs/reliability.md, tested on
# the real binary: inputs are never modified (checksums of every input before
# and after all the commands below), nothing partial or temporary is left
# behind on failure (bad input, a failed verification, an input that changes
# while it is read, disk full, a full stdout, SIGINT, SIGTERM, SIGHUP),
# refusals (existing target, the input itself, a symlink), mode 0600, the
# atomic write's system calls (with strace), and contained paths (a crafted
# session id, thread id, timestamp or --cwd never puts a file outside
# --session-dir or --agent-dir).
#   safety_test.sh PI_HYDRATE
set -u
bin=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'exec 3>&- 2>/dev/null; umount "$work/small" 2>/dev/null; rm -rf "$work"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }
leftovers() { find "$1" -name '.pi-hydrate-*' | wc -l; }
# In a sanitizer build, any finding aborts (exit 134), which no check below
# accepts. Without abort_on_error UBSan exits with 1, which a check could take
# for the expected "input has errors". A release build ignores both variables.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}abort_on_error=1"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}halt_on_error=1:abort_on_error=1"

# ---- Inputs. Every file a command below reads is listed in `inputs`; their
# checksums are compared once more after the last command.
session="$work/in.jsonl"
cp "$root/examples/session.jsonl" "$session"
thread="$work/t.json"
cp "$root/examples/thread.json" "$thread"
printf '{"type":"message"}\n' > "$work/noheader.jsonl"
printf '{"format":"thread-export","version":2}' > "$work/bad.json"
python3 "$root/tools/gen_corpus.py" --kind session --size 160M --seed 3 -o "$work/big.jsonl"
big="$work/big.jsonl"
for kind in session thread; do
  python3 "$root/tools/gen_corpus.py" --kind $kind --size 2M --seed 3 -o "$work/full-$kind.json"
done
# Crafted names: a header id and timestamp that climb out of the target, an id
# with '/', an id too long for a file name, a thread whose id, createdAt and
# entry id climb out.
sed '1s|"id":"[^"]*"|"id":"../../evil"|; 1s|"timestamp":"[^"]*"|"timestamp":"../../../evil"|' \
  "$session" > "$work/evil-id.jsonl"
sed '1s|"id":"[^"]*"|"id":"a/b/../../../evil"|' "$session" > "$work/slash-id.jsonl"
sed "1s|\"id\":\"[^\"]*\"|\"id\":\"$(printf 'a%.0s' $(seq 1 300))\"|" "$session" > "$work/long-id.jsonl"
python3 - "$thread" "$work/evil-thread.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["thread"]["id"] = "../../evil/x"
doc["thread"]["createdAt"] = "../../../evil"
doc["entries"][0]["id"] = "../../../e1"
json.dump(doc, open(sys.argv[2], "w"))
EOF
inputs=("$session" "$thread" "$work/noheader.jsonl" "$work/bad.json" "$big" "$work/full-session.json" "$work/full-thread.json" "$work/evil-id.jsonl"
        "$work/slash-id.jsonl" "$work/long-id.jsonl" "$work/evil-thread.json")
sum_before=$(sha256sum "$session" "$thread")
all_before=$(sha256sum "${inputs[@]}")

# Inputs are never modified, by any command.
codes=""
"$bin" validate "$session" > /dev/null; codes+=" $?"
"$bin" validate --level lint --format json "$session" > /dev/null; codes+=" $?"
"$bin" --session "$session" --cwd "$work" -o "$work/out1.jsonl" 2> /dev/null; codes+=" $?"
"$bin" --thread "$thread" --cwd "$work" -o "$work/out2.jsonl" 2> /dev/null; codes+=" $?"
"$bin" --session "$session" --cwd "$work" -o - > /dev/null 2>&1; codes+=" $?"
check "validate and hydrate of the examples: exit 0 each (got$codes)" '[ "$codes" = " 0 0 0 0 0" ]'
check "inputs unchanged after validate and hydrate" '[ "$(sha256sum "$session" "$thread")" = "$sum_before" ]'

# Created files are 0600: sessions hold secrets.
check "output mode is 0600" '[ "$(stat -c %a "$work/out1.jsonl")" = 600 ]'

# Atomic write, seen in the system calls (when strace is installed): a new
# temporary file (O_EXCL, 0600) in the target's directory, fsynced, then
# linked onto the target (rename with --force), then the directory fsynced.
atomic_trace() {  # LABEL EXTRA_ARGS...
  local label=$1 dir="$work/atomic" verdict code
  shift
  mkdir -p "$dir"
  # LeakSanitizer cannot run under ptrace: off for this run of a sanitizer build.
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    strace -f -qq -e trace=openat,fsync,fdatasync,link,linkat,rename,renameat,renameat2 -o "$dir/trace.txt" \
    "$bin" --session "$session" --cwd "$work" -o "$dir/out.jsonl" "$@" 2> /dev/null
  code=$?
  verdict=$(python3 - "$dir/trace.txt" "$dir" <<'EOF2'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
d = sys.argv[2]
def find(pat, start=0):
    for i in range(start, len(lines)):
        m = re.search(pat, lines[i])
        if m:
            return i, m
    return None, None
i, m = find(r'openat\(AT_FDCWD, "' + re.escape(d) + r'/(\.pi-hydrate-[^"]+)", O_RDWR\|O_CREAT\|O_EXCL, 0600\)\s*= (\d+)')
if i is None:
    sys.exit("no temporary file created with O_EXCL and mode 0600 in the target directory")
temp, fd = m.group(1), m.group(2)
j, _ = find(r'\b(fsync|fdatasync)\(' + fd + r'\)\s*= 0', i)
if j is None:
    sys.exit("the temporary file is never fsynced")
k, m = find(r'\b(link|linkat|rename|renameat|renameat2)\(.*' + re.escape(temp) + r'".*out\.jsonl".*= 0', i)
if k is None or k < j:
    sys.exit("no link/rename of the temporary file onto the target after its fsync")
op = m.group(1)
l, m = find(r'openat\(AT_FDCWD, "' + re.escape(d) + r'", [^)]*O_DIRECTORY[^)]*\)\s*= (\d+)', k)
if l is None or find(r'\bfsync\(' + m.group(1) + r'\)\s*= 0', l)[0] is None:
    sys.exit("the directory is not fsynced after the " + op)
print(op)
EOF2
)
  check "atomic write ($label): temporary file 0600 in the target directory, fsynced, ${verdict:-?} onto the target, directory fsynced" \
    '[ $code -eq 0 ] && [ -s "$dir/out.jsonl" ] && [ -n "$verdict" ] && [ "$(leftovers "$dir")" -eq 0 ]'
}
if command -v strace > /dev/null && strace -f -o /dev/null true 2> /dev/null; then
  atomic_trace "new file"
  atomic_trace "--force over an existing file" --force
else
  echo "skip: strace is not available (atomic-write system call checks)"
fi

# ---- Refusals.
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
mkfifo "$work/fifo"
"$bin" --session "$session" --cwd "$work" -o "$work/fifo" --force 2> /dev/null
code=$?
check "a FIFO (or device, as /dev/null) target refused even with --force (exit 2), left as it was" '[ $code -eq 2 ] && [ -p "$work/fifo" ]'
mkdir "$work/a-directory"
"$bin" --session "$session" --cwd "$work" -o "$work/a-directory" --force 2> /dev/null
code=$?
check "a directory target refused (exit 2)" '[ $code -eq 2 ] && [ -d "$work/a-directory" ]'
"$bin" --session "$session" --cwd "$work" -o "$work/existing.jsonl" --force 2> /dev/null
code=$?
check "--force replaces an existing file" '[ $code -eq 0 ] && [ "$(head -c 17 "$work/existing.jsonl")" = "{\"type\":\"session\"" ]'

# ---- Bad input: exit 1, nothing written, no temporary file.
"$bin" --session "$work/noheader.jsonl" --cwd "$work" -o "$work/out3.jsonl" 2> /dev/null
code=$?
check "bad input: exit 1, no output, no temporary file" '[ $code -eq 1 ] && [ ! -e "$work/out3.jsonl" ] && [ "$(leftovers "$work")" -eq 0 ]'
"$bin" --thread "$work/bad.json" --cwd "$work" --session-dir "$work/sd" 2> /dev/null
code=$?
check "bad thread: exit 1, nothing in --session-dir" '[ $code -eq 1 ] && [ -z "$(ls -A "$work/sd" 2>/dev/null)" ]'
"$bin" --session "$work/noheader.jsonl" --cwd "$work" --session-dir "$work/made/x/y" 2> /dev/null
code=$?
check "bad input: exit 1, the directories made for --session-dir removed again" '[ $code -eq 1 ] && [ ! -e "$work/made" ]'
"$bin" --thread "$work/bad.json" --cwd "$work" --agent-dir "$work/made-agent" 2> /dev/null
code=$?
check "bad thread: exit 1, the --agent-dir tree made for it removed again" '[ $code -eq 1 ] && [ ! -e "$work/made-agent" ]'

# ---- Verification failure. The output fails verification when its header
# cwd is gone by the time it is validated (PH103). Standard input is a FIFO:
# once pi-hydrate spools it (an unlinked temporary file appears among its open
# files; the --cwd check is behind it), the cwd is removed, then the session is
# sent. Deterministic: no race with the write. The spool is matched by its
# name: a parent may pass down other deleted files (this one's did).
vf="$work/vf"
mkdir -p "$vf/out" "$vf/gone"
mkfifo "$vf/fifo"
"$bin" --session - --cwd "$vf/gone" -o "$vf/out/out.jsonl" < "$vf/fifo" 2> "$vf/err.txt" &
pid=$!
exec 3> "$vf/fifo"
spooling=0
for _ in $(seq 1 3000); do
  if ls -l /proc/$pid/fd 2> /dev/null | grep -q 'pi-hydrate-spool-.* (deleted)'; then spooling=1; break; fi
  sleep 0.01
done
rmdir "$vf/gone"
cat "$session" >&3
exec 3>&-
wait $pid
code=$?
check "verification failure: exit 1, no output, no temporary file" \
  '[ $spooling -eq 1 ] && [ $code -eq 1 ] && grep -q "output failed verification" "$vf/err.txt" && [ ! -e "$vf/out/out.jsonl" ] && [ "$(leftovers "$vf")" -eq 0 ]'

# ---- Disk full: a 64 KiB tmpfs cannot hold either hydrated input (a
# session and a thread export of 2 MiB each; the output's blocks are
# reserved ahead, which must fail the same way).
mkdir -p "$work/small"
if mount -t tmpfs -o size=64k tmpfs "$work/small" 2> /dev/null; then
  for kind in session thread; do
    "$bin" --$kind "$work/full-$kind.json" --cwd "$work" -o "$work/small/out.jsonl" 2> "$work/err.txt"
    code=$?
    check "disk full ($kind): exit 2, no partial output, no temporary file" \
      '[ $code -eq 2 ] && grep -q "No space left on device" "$work/err.txt" && [ ! -e "$work/small/out.jsonl" ] && [ "$(leftovers "$work/small")" -eq 0 ]'
  done
  umount "$work/small"
else
  echo "skip: cannot mount a tmpfs here (disk-full case)"
fi

# A stdout that cannot be written: exit 2, no temporary file in TMPDIR.
mkdir -p "$work/tmp"
TMPDIR="$work/tmp" "$bin" --session "$session" --cwd "$work" -o - > /dev/full 2> /dev/null
code=$?
check "full stdout: exit 2, no temporary file" '[ $code -eq 2 ] && [ "$(leftovers "$work/tmp")" -eq 0 ]'

# ---- Mid-write events on the 160 MB input. Each waits until the temporary
# file exists (up to 300 s: the sanitizer build indexes slowly), so the event
# lands between the first write and the rename; the check requires that the
# temporary file was seen.
wait_for_temp() {  # DIR PID: 0 once DIR holds a temporary file, 1 if PID ended first
  # Shell builtins only, every half millisecond: a small input's output
  # exists for some tens of milliseconds, and starting a process per round
  # (find, sed, sleep; python takes 0.15 s to start here) can miss all of it.
  local sleep_fd stat i
  exec {sleep_fd}<> <(:)
  for ((i = 0; i < 600000; i++)); do  # up to 300 s: the sanitizer build indexes slowly
    if compgen -G "$1/.pi-hydrate-*" > /dev/null; then exec {sleep_fd}>&-; return 0; fi
    # ended (a zombie until `wait` reaps it, so kill -0 would still succeed)
    if ! read -r stat 2> /dev/null < "/proc/$2/stat" || [[ ${stat##*) } == Z* ]]; then
      exec {sleep_fd}>&-
      return 1
    fi
    read -rt 0.0005 -u "$sleep_fd" || true
  done
  exec {sleep_fd}>&-
  return 1
}

# PID: stops the process (SIGSTOP) and returns once it stands still (or has
# ended): the signal is only queued when kill returns, and a process still
# running on the other core could rename its output into place meanwhile.
stop_and_wait() {
  local stat i sleep_fd
  kill -STOP "$1" 2> /dev/null || return 0
  exec {sleep_fd}<> <(:)
  for ((i = 0; i < 20000; i++)); do  # up to 10 s
    if ! read -r stat 2> /dev/null < "/proc/$1/stat"; then break; fi
    case ${stat##*) } in T* | t* | Z*) break ;; esac
    read -rt 0.0005 -u "$sleep_fd" || true
  done
  exec {sleep_fd}>&-
}

# DIR ERR MUTATION CMD...: runs CMD in the background (stderr to ERR) and
# evaluates MUTATION once DIR holds CMD's temporary output, with CMD stopped
# (SIGSTOP) meanwhile: on a busy machine the poll may see the file late, and
# the mutation must still come before the output is renamed into place.
# Sets `seen` (1 when the file showed and CMD had not finished by then) and
# `code` (CMD's exit status).
mutate_while_writing() {
  local dir=$1 err=$2 mutation=$3 pid
  shift 3
  "$@" 2> "$err" &
  pid=$!
  seen=0
  if wait_for_temp "$dir" $pid; then
    stop_and_wait $pid
    [ -e "$dir/out.jsonl" ] || seen=1
  fi
  eval "$mutation"
  kill -CONT $pid 2> /dev/null
  wait $pid
  code=$?
}
# DIR: the command ended with exit 1 and PH904, and left nothing in DIR.
refused_as_changed() {
  [ $code -eq 1 ] && grep -q "PH904" "$1/err.txt" && [ ! -e "$1/out.jsonl" ] && [ "$(leftovers "$1")" -eq 0 ]
}
# NAME KIND INPUT MUTATION DESCRIPTION: a fresh 48 MiB generated KIND
# (session|thread) at INPUT, hydrated into $work/NAME; MUTATION runs once the
# output is being written; the run must be refused as changed.
refused_when_changed_mid_write() {
  local name=$1 kind=$2 input=$3 mutation=$4
  python3 "$root/tools/gen_corpus.py" --kind "$kind" --size 48M --seed 3 -o "$input"
  mkdir -p "$work/$name"
  mutate_while_writing "$work/$name" "$work/$name/err.txt" "$mutation" \
    "$bin" --"$kind" "$input" --cwd "$work" -o "$work/$name/out.jsonl"
  check "$5: exit 1 (PH904), no output, no temporary file" '[ $seen -eq 1 ] && refused_as_changed "$work/'"$name"'"'
}

# A signal: killed by it, no output, no temporary file. A background job of a
# script starts with SIGINT ignored and pi-hydrate keeps an ignored signal
# ignored, so the default action is restored before exec. The process is
# stopped (SIGSTOP) as soon as its temporary file shows, and signalled while
# it stands still: on a busy machine the poll may see the file late, and a
# signal sent after the output was renamed into place would test nothing. A
# run found finished by then (the output already there) is tried again.
signal_mid_write() {  # SIGNAL EXPECTED_EXIT
  local sig=$1 want=$2 dir="$work/sig-$1" seen=0 done_early=1 code pid try
  for try in 1 2 3; do
    rm -rf "$dir" && mkdir -p "$dir"
    python3 -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$bin" --session "$big" --cwd "$work" -o "$dir/out.jsonl" 2> /dev/null &
    pid=$!
    seen=0
    wait_for_temp "$dir" $pid && seen=1
    stop_and_wait $pid
    done_early=0
    [ -e "$dir/out.jsonl" ] && done_early=1
    kill -"$sig" $pid 2> /dev/null
    kill -CONT $pid 2> /dev/null
    wait $pid 2> /dev/null  # without bash's "Hangup" job notice
    code=$?
    [ $seen -eq 1 ] && [ $done_early -eq 0 ] && break
  done
  local left present=0
  left=$(leftovers "$dir")
  [ -e "$dir/out.jsonl" ] && present=1
  check "SIG$sig mid-write: killed by the signal (exit $code), no output, no temporary file (seen $seen, finished first $done_early, output $present, temporary files $left, try $try)" \
    '[ $seen -eq 1 ] && [ $done_early -eq 0 ] && [ $code -eq $want ] && [ ! -e "$dir/out.jsonl" ] && [ "$(leftovers "$dir")" -eq 0 ]'
}
signal_mid_write INT 130
signal_mid_write TERM 143
signal_mid_write HUP 129

# The input grows while it is read (a copy: the real inputs stay untouched):
# exit 1 (PH904), no output, no temporary file.
cp "$big" "$work/changing.jsonl"
mkdir -p "$work/ch"
extra='{"type":"custom","id":"ffff0001","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","customType":"x"}'
mutate_while_writing "$work/ch" "$work/ch/err.txt" 'printf "%s\n" "$extra" >> "$work/changing.jsonl"' \
  "$bin" --session "$work/changing.jsonl" --cwd "$work" -o "$work/ch/out.jsonl"
check "input changed mid-read: exit 1 (PH904), no output, no temporary file" '[ $seen -eq 1 ] && refused_as_changed "$work/ch"'
rm -f "$work/changing.jsonl"

# A thread export is read in place (mapped): one that grows while it is
# read, and one cut short while it is read (the pages past its new end are
# gone: SIGBUS, reported as PH904), both end in exit 1 with nothing written.
# FILE PID: cuts FILE to 4 KiB once PID has it mapped (being converted);
# 0 when it was mapped, 1 when PID ended first.
truncate_once_mapped() {
  local mapped=1
  for _ in $(seq 1 30000); do
    if grep -q "$(basename "$1")" "/proc/$2/maps" 2> /dev/null; then mapped=0; break; fi
    case $(sed 's/.*) //' "/proc/$2/stat" 2> /dev/null) in Z* | '') break ;; esac
    sleep 0.001
  done
  truncate -s 4096 "$1"
  return $mapped
}
refused_when_changed_mid_write cht thread "$work/changing.json" 'printf "\n" >> "$work/changing.json"' \
  "thread export changed mid-read"
python3 "$root/tools/gen_corpus.py" --kind thread --size 48M --seed 3 -o "$work/changing.json"
mkdir -p "$work/trt"
"$bin" --thread "$work/changing.json" --cwd "$work" -o "$work/trt/out.jsonl" 2> "$work/trt/err.txt" &
pid=$!
truncate_once_mapped "$work/changing.json" $pid && mapped=1 || mapped=0
wait $pid
code=$?
check "thread export cut short mid-read: exit 1 (PH904), no crash, no output, no temporary file" \
  '[ $mapped -eq 1 ] && refused_as_changed "$work/trt"'
# The same into an --agent-dir that does not exist yet, with --report json:
# the report is JSON, and the directories made for the output are gone.
python3 "$root/tools/gen_corpus.py" --kind thread --size 48M --seed 3 -o "$work/changing.json"
"$bin" --thread "$work/changing.json" --cwd "$work" --agent-dir "$work/trt-agent" --report json 2> "$work/trt/err.json" &
pid=$!
truncate_once_mapped "$work/changing.json" $pid && mapped=1 || mapped=0
wait $pid
code=$?
check "thread export cut short mid-read, --agent-dir, --report json: exit 1, a JSON report with PH904, the agent-dir tree removed" \
  '[ $mapped -eq 1 ] && [ $code -eq 1 ] && python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if not r[\"ok\"] and r[\"diagnostics\"][0][\"code\"]==\"PH904\" else 1)" "$work/trt/err.json" && [ ! -e "$work/trt-agent" ]'
# Cut short once its output is being written: the converted lines' borrowed
# runs are read from the export again then, and come up short (or the size
# check after them notices).
refused_when_changed_mid_write trw thread "$work/changing.json" 'truncate -s 4096 "$work/changing.json"' \
  "thread export cut short while its lines are written"
rm -f "$work/changing.json"
# A session cut short once its output is being written (after the index,
# while or before its lines are read again): the read comes up short, or
# the size check after it notices.
refused_when_changed_mid_write trs session "$work/changing.jsonl" 'truncate -s 4096 "$work/changing.jsonl"' \
  "session cut short while its lines are written"
rm -f "$work/changing.jsonl"

# ---- Contained paths: names derived from the input or the options never put
# a file outside --session-dir or --agent-dir. Each target sits three levels
# below $work, so an escape through ../.. would land inside $work, where a
# listing of $work (all but the target) taken before and after sees it.
# Outcome: exit 0 with the printed path a regular file in the right directory,
# or exit 2 (refused) with nothing in the target; either way nothing new outside.
outside() { find "$work" -path "$1" -prune -o -print | sort; }
placed() {  # PATH TARGET MODE [AGENT_SUBDIR]
  local file=$1 target=$2 mode=$3 dir
  [ -f "$file" ] && [ ! -L "$file" ] || return 1
  dir=$(dirname "$(realpath "$file")")
  if [ "$mode" = session-dir ]; then
    [ "$dir" = "$(realpath "$target")" ]
  elif [ -n "${4:-}" ]; then
    [ "$dir" = "$(realpath "$target")/sessions/$4" ]
  else
    [ "$(dirname "$dir")" = "$(realpath "$target")/sessions" ] && case $(basename "$dir") in --*--) true ;; *) false ;; esac
  fi
}
n_contained=0
contained() {  # NAME MODE EXPECT(any|refused) [AGENT_SUBDIR] -- HYDRATE ARGS...
  local name=$1 mode=$2 expect=$3 sub="" before after out code target
  shift 3
  if [ "$1" != -- ]; then sub=$1; shift; fi
  shift
  n_contained=$((n_contained + 1))
  target="$work/cp/$n_contained/a/target"
  mkdir -p "$target"
  : > "$work/cp/$n_contained/err.txt"
  before=$(outside "$target")
  out=$("$bin" "$@" --"$mode" "$target" 2> "$work/cp/$n_contained/err.txt")
  code=$?
  after=$(outside "$target")
  if [ $code -eq 0 ] && [ "$expect" = any ]; then
    check "contained, $name (--$mode): written inside the target" \
      '[ "$before" = "$after" ] && placed "$out" "$target" "$mode" "$sub" && [ "$(leftovers "$target")" -eq 0 ]'
  else
    check "contained, $name (--$mode): refused (exit $code, expected 2), nothing written" \
      '[ $code -eq 2 ] && [ "$before" = "$after" ] && [ -z "$(find "$target" -type f)" ]'
  fi
}
for mode in session-dir agent-dir; do
  contained "header id ../../evil, timestamp ../../../evil" $mode any -- --session "$work/evil-id.jsonl" --cwd "$work"
  contained "header id with '/'" $mode any -- --session "$work/slash-id.jsonl" --cwd "$work"
  contained "thread id, createdAt and entry id climbing out" $mode any -- --thread "$work/evil-thread.json" --cwd "$work"
  contained "header id too long for a file name" $mode refused -- --session "$work/long-id.jsonl" --cwd "$work"
  contained "--session-id ../../evil" $mode refused -- --session "$session" --cwd "$work" --session-id ../../evil
  contained "--session-id a/b" $mode refused -- --thread "$thread" --cwd "$work" --session-id a/b
  contained "--timestamp ../../evil" $mode refused -- --session "$session" --cwd "$work" --timestamp ../../evil
done
# A --cwd with '..' components: the encoded directory is one path component
# derived from the normalized cwd, directly under DIR/sessions.
mkdir -p "$work/cwds/a" "$work/cwds/b"
norm=$(realpath -ms "$work/cwds/a/../b")
enc="--$(printf '%s' "${norm#/}" | tr '/\\:' '---')--"
contained "--cwd with '..' components" agent-dir any "$enc" -- --session "$session" --cwd "$work/cwds/a/../b/."
contained "thread, --cwd with '..' components" agent-dir any "$enc" -- --thread "$thread" --cwd "$work/cwds/a/../../cwds/b"
contained "--cwd climbing above /" agent-dir any -- --session "$session" --cwd "$work/cwds/a/../../../../../../../../../../.."
contained "--cwd relative with '..'" agent-dir any -- --session "$session" --cwd "../../../../../../../../../../.."
"$bin" --session "$session" --cwd "$work/cwds/a/../../../../../../../../../../.." -o - 2> /dev/null > "$work/above-root.jsonl"
code=$?
check "--cwd climbing above /: the header cwd is / (exit $code)" \
  '[ $code -eq 0 ] && head -n 1 "$work/above-root.jsonl" | grep -q "\"cwd\":\"/\"}"'

# An OpenCode database and its -wal (docs/opencode.md O1): the folder holding
# them is the same, names and bytes, after a conversion, a tree and a
# validate; also mounted read-only (a user and mount namespace, where the
# machine allows one: as root a folder's mode alone does not stop a write).
oc="$work/opencode"
mkdir -p "$oc"
cp "$root/tests/agents/recorded/opencode-1.18.33/plain-turns/opencode.db" \
   "$root/tests/agents/recorded/opencode-1.18.33/plain-turns/opencode.db-wal" "$oc/"
# The folder's own time changes when anything is made in it, even if removed again.
oc_state() { (cd "$oc" && ls -lA --time-style=full-iso && stat -c '%y' . && sha256sum -- *); }
oc_before=$(oc_state)
"$bin" --session "$oc/opencode.db" --cwd "$work" -o "$work/oc.jsonl" 2> /dev/null
c1=$?
"$bin" tree "$oc/opencode.db" > /dev/null 2>&1
"$bin" validate "$oc/opencode.db" > /dev/null 2>&1
check "OpenCode database: converted (exit $c1), its folder's names and bytes unchanged, no -shm made" \
  '[ $c1 -eq 0 ] && [ "$(oc_state)" = "$oc_before" ] && [ ! -e "$oc/opencode.db-shm" ]'
if unshare -r -m true 2> /dev/null; then
  unshare -r -m sh -c 'mount --bind -o ro "$1" "$1" && "$2" --session "$1/opencode.db" --cwd "$3" -o "$3/oc-ro.jsonl"' \
    sh "$oc" "$bin" "$work" 2> /dev/null
  c2=$?
  check "OpenCode database in a read-only mount: converted (exit $c2) to the same session" \
    '[ $c2 -eq 0 ] && cmp -s "$work/oc.jsonl" "$work/oc-ro.jsonl"'
else
  echo "skip: no user and mount namespace here for the read-only OpenCode folder"
fi

# Inputs never modified: every input, after every command above.
check "every input unchanged after all ${#inputs[@]} inputs went through the commands above" \
  '[ "$(sha256sum "${inputs[@]}")" = "$all_before" ]'

echo "safety: $passed passed, $failed failed"
[ $failed -eq 0 ]
