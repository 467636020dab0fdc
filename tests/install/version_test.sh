#!/usr/bin/env bash
# --version (docs/install.md): the binary's line has the project version and
# a commit; the build step behind it (cmake/build_info.cmake) names HEAD,
# adds -dirty for changed tracked files (not for untracked ones), says
# "unknown" outside a git checkout, and rewrites its header only when the
# text changes (so nothing recompiles needlessly).
#   version_test.sh CMAKE PI_HYDRATE VERSION BUILD_INFO_CMAKE
set -u
cmake=$1 bin=$2 version=$3 script=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

line=$("$bin" --version)
check "'$line' is 'pi-hydrate $version (commit HASH[-dirty]|unknown)'" \
  "echo '$line' | grep -qxE 'pi-hydrate ${version//./\\.} \\(commit ([0-9a-f]{7,40}(-dirty)?|unknown)\\)'"

commit_of() { # commit_of SOURCE_DIR: the commit the build step writes for it
  "$cmake" -DSOURCE_DIR="$1" -DOUTPUT="$work/build_info.h" -DVERSION="$version" -P "$script" &&
    sed -n 's/^#define PIHYDRATE_COMMIT "\(.*\)"$/\1/p' "$work/build_info.h"
}
mkdir -p "$work/tarball"
echo x > "$work/tarball/file"
check "outside a git checkout: unknown" "[ \"\$(commit_of '$work/tarball')\" = unknown ]"
check "the version is the project's" "grep -qx '#define PIHYDRATE_VERSION \"$version\"' '$work/build_info.h'"
if command -v git > /dev/null; then
  repo=$work/repo
  mkdir -p "$repo"
  git -C "$repo" init -q
  echo a > "$repo/tracked"
  git -C "$repo" add tracked
  git -C "$repo" -c user.name=test -c user.email=test@example.invalid commit -q -m first
  head=$(git -C "$repo" rev-parse --short=7 HEAD)
  check "a clean checkout: HEAD's short hash $head" "[ \"\$(commit_of '$repo')\" = '$head' ]"
  touch -d '2000-01-01' "$work/build_info.h"
  commit_of "$repo" > /dev/null
  check "the same commit again leaves the header untouched" "[ \$(date -r '$work/build_info.h' +%Y) = 2000 ]"
  echo untracked > "$repo/new"
  check "an untracked file does not make it dirty" "[ \"\$(commit_of '$repo')\" = '$head' ]"
  echo b > "$repo/tracked"
  check "a changed tracked file: $head-dirty" "[ \"\$(commit_of '$repo')\" = '$head-dirty' ]"
  mkdir -p "$repo/sub/tarball"
  echo "sub/" > "$repo/.git/info/exclude"
  check "a source tree inside another checkout: unknown" "[ \"\$(commit_of '$repo/sub/tarball')\" = unknown ]"
else
  echo "skip: git is not installed; only the unknown case is checked"
fi

echo "version: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
