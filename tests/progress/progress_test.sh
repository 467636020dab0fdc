#!/usr/bin/env bash
# Progress on a terminal, and never elsewhere: pi-hydrate under a
# pseudo-terminal (util-linux `script`) draws its status line on stderr and
# erases it; with stderr on a file or a pipe it writes no control bytes.
# PIHYDRATE_PROGRESS=1 draws at once instead of after a second, so a quick
# job shows it; =0 turns it off.
#   progress_test.sh PI_HYDRATE
set -uo pipefail
bin=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v script >/dev/null || { echo "progress: SKIP: util-linux 'script' is not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failed=0
check() {  # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; failed=1; fi
}
has() { grep -aq -- "$2" "$1"; }
lacks_control_bytes() { ! LC_ALL=C grep -aq $'[\r\033]' "$1"; }

# On a terminal: the phase is drawn, then erased; the file is the same as without one.
PIHYDRATE_PROGRESS=1 script -qec "'$bin' --thread '$root/examples/thread.json' --cwd '$work' -o tty.jsonl" /dev/null > tty.txt
"$bin" --thread "$root/examples/thread.json" --cwd "$work" -o plain.jsonl 2> plain.err
# Which phase the first redraw catches depends on scheduling: any of them, with its elapsed time.
drawn_phase() { LC_ALL=C grep -aEq 'pi-hydrate: (reading the input|converting the thread export|writing the session|verifying the output): .* \([0-9]+\.[0-9] s\)' "$1"; }
check "terminal: the phase is drawn" drawn_phase tty.txt
check "terminal: the line is erased" has tty.txt $'\r\033\[K'
check "terminal: the same session" cmp -s tty.jsonl plain.jsonl

# Not a terminal: nothing but the report, even when asked to draw at once.
PIHYDRATE_PROGRESS=1 "$bin" --thread "$root/examples/thread.json" --cwd "$work" -o file.jsonl 2> file.err
check "stderr on a file: no control bytes" lacks_control_bytes file.err
check "stderr on a file: the report is unchanged" cmp -s file.err <(sed 's/plain.jsonl/file.jsonl/' plain.err)
PIHYDRATE_PROGRESS=1 "$bin" validate "$root/examples/session.jsonl" 2>&1 | cat > pipe.txt
check "stderr on a pipe: no control bytes" lacks_control_bytes pipe.txt

# validate over several files counts them; PIHYDRATE_PROGRESS=0 silences it.
cp "$root/examples/session.jsonl" a.jsonl && cp a.jsonl b.jsonl && cp a.jsonl c.jsonl
PIHYDRATE_PROGRESS=1 script -qec "'$bin' validate --no-cwd-check a.jsonl b.jsonl c.jsonl" /dev/null > validate.txt
check "terminal: validate counts files" has validate.txt "pi-hydrate: validated "
PIHYDRATE_PROGRESS=0 script -qec "'$bin' validate --no-cwd-check a.jsonl b.jsonl c.jsonl" /dev/null > off.txt
lacks_progress() { ! has "$1" "pi-hydrate: validated" && ! LC_ALL=C grep -aq $'\033' "$1"; }
check "PIHYDRATE_PROGRESS=0: nothing drawn" lacks_progress off.txt
exit $failed
