#!/usr/bin/env bash
# The pre-commit hook of .pre-commit-hooks.yaml, run by Debian's pre-commit as
# a user's repository would run it: `pre-commit try-repo` on this source tree,
# in a scratch git repository holding a clean fixture, a broken one and a file
# the hook must not check. The binary under test is the only pi-hydrate on
# PATH's first entry, and PRE_COMMIT_HOME is a scratch folder, so the user's
# own pre-commit cache is neither read nor written.
#   precommit_test.sh PI_HYDRATE
# Exit 77 (CTest skip) when the source is not a git checkout or pre-commit is
# missing: try-repo clones the hook repository with git.
set -u
bin=$(realpath "$1")
root=$(cd "$(dirname "$0")/../.." && pwd -P)

skip() {
  echo "SKIP: $*"
  exit 77
}
command -v git >/dev/null || skip "git is missing (tools/install-deps.sh installs it)"
command -v pre-commit >/dev/null || skip "pre-commit is missing (tools/install-deps.sh installs it)"
# The source must be its own checkout, not a tarball unpacked inside another repository.
toplevel=$(git -C "$root" rev-parse --show-toplevel 2>/dev/null) || toplevel=
[ "$toplevel" = "$root" ] || skip "$root is not a git checkout (or git refuses it: run git -C $root status): pre-commit try-repo clones it"
# try-repo copies uncommitted changes of tracked files only: an untracked hook
# file would be invisible to it, and the failure would be pre-commit's riddle.
if ! git -C "$root" ls-files --error-unmatch .pre-commit-hooks.yaml >/dev/null 2>&1; then
  echo "FAIL: .pre-commit-hooks.yaml is not tracked by git in $root (git add it): try-repo cannot see it"
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# The hook's entry is `pi-hydrate ...`: a folder holding only a link to the
# binary under test goes first on PATH, whatever the binary's file name.
mkdir -p "$work/bin"
ln -s "$bin" "$work/bin/pi-hydrate"
export PATH="$work/bin:$PATH"
export PRE_COMMIT_HOME="$work/pre-commit-home"
# Variables git sets while running hooks would point git at the wrong repository.
unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE

repo=$work/repo
mkdir -p "$repo/fixtures"
git init -q "$repo"
cat > "$repo/fixtures/clean.jsonl" <<'JSONL'
{"type":"session","version":3,"id":"019b7e2a-5c3d-7a41-9e2b-4a6c8d0e1f23","timestamp":"2026-01-02T03:04:05.123Z","cwd":"/"}
{"type":"message","id":"2b3c4d5e","parentId":null,"timestamp":"2026-01-02T03:04:09.334Z","message":{"role":"user","content":[{"type":"text","text":"List the files."}],"timestamp":1767323049334}}
JSONL
# Line 3 lacks the comma before "timestamp" (column 57): PH001, an error.
{
  head -n 2 "$repo/fixtures/clean.jsonl"
  echo '{"type":"message","id":"3c4d5e6f","parentId":"2b3c4d5e" "timestamp":"2026-01-02T03:04:13.545Z"}'
} > "$repo/fixtures/broken.jsonl"
# Not a session: validate would reject it, so the hook's `files` pattern must skip it.
echo "not a session" > "$repo/notes.txt"
git -C "$repo" add fixtures notes.txt

# Runs the hook on the given files; sets `out` and `rc`.
try_hook() {
  out=$(cd "$repo" && pre-commit try-repo --color never "$root" pi-hydrate-validate --files "$@" 2>&1)
  rc=$?
}

try_hook fixtures/clean.jsonl
if [ "$rc" -eq 0 ] && grep -q 'Passed' <<<"$out"; then
  ok "a clean fixture passes (exit 0)"
else
  bad "a clean fixture: exit $rc, expected 0 and Passed"
  echo "$out"
fi

try_hook fixtures/broken.jsonl
if [ "$rc" -eq 1 ] && grep -q 'Failed' <<<"$out" &&
  grep -qF 'fixtures/broken.jsonl:3:57: error: invalid JSON' <<<"$out" && grep -qF '[PH001]' <<<"$out"; then
  ok "a broken fixture fails (exit 1) with fixtures/broken.jsonl:3:57 and PH001 in the output"
else
  bad "a broken fixture: exit $rc, expected 1 with fixtures/broken.jsonl:3:57 ... [PH001]"
  echo "$out"
fi

try_hook fixtures/clean.jsonl fixtures/broken.jsonl
if [ "$rc" -eq 1 ] && grep -qF 'fixtures/broken.jsonl:3:57' <<<"$out" &&
  grep -qF 'fixtures/clean.jsonl: loadable' <<<"$out"; then
  ok "both fixtures at once: exit 1, each file reported"
else
  bad "both fixtures at once: exit $rc, expected 1 with both files reported"
  echo "$out"
fi

try_hook notes.txt
if [ "$rc" -eq 0 ] && grep -q 'no files to check' <<<"$out"; then
  ok "a file that is not *.jsonl is not given to the hook"
else
  bad "notes.txt: exit $rc, expected 0 and (no files to check)"
  echo "$out"
fi

echo "precommit: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
