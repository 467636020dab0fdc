#!/usr/bin/env bash
# Formats the C++ sources with clang-format and .clang-format.
#   tools/format.sh           rewrite every tracked .cc and .h file in place
#   tools/format.sh --check   change nothing; list what is not formatted, exit 1 if any
# Debian 12's clang-format 14 is the reference (tools/install-deps.sh
# --format); other versions may lay some lines out differently.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format.sh: clang-format is needed (tools/install-deps.sh --format)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [ "${1:-}" = "--check" ]; then
  bad=()
  for f in "${files[@]}"; do
    clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done
  if [ ${#bad[@]} -gt 0 ]; then
    printf 'format.sh: not formatted (run tools/format.sh): %s\n' "${bad[@]}" >&2
    exit 1
  fi
  echo "format.sh: ${#files[@]} files formatted"
else
  clang-format -i "${files[@]}"
fi
