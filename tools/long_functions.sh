#!/usr/bin/env bash
# Lists the functions longer than N lines (default 120) in src/ and
# include/, longest first, with clang-tidy's readability-function-size:
#   tools/long_functions.sh [N]
# Needs a build directory with compile_commands.json (build-dev, else build;
# configure with -DCMAKE_EXPORT_COMPILE_COMMANDS=ON).
set -euo pipefail
cd "$(dirname "$0")/.."
limit=${1:-120}
dir=build-dev
[ -f "$dir/compile_commands.json" ] || dir=build
[ -f "$dir/compile_commands.json" ] || { echo "long_functions.sh: no compile_commands.json in build-dev or build" >&2; exit 2; }
for f in $(git ls-files 'src/*.cc'); do
  clang-tidy -p "$dir" --checks='-*,readability-function-size' --header-filter='(src|include)/' \
    --config="{CheckOptions: [{key: readability-function-size.LineThreshold, value: $limit}]}" "$f" 2>/dev/null || true
done | awk '
  /warning: function .* exceeds/ { split($0, a, ":"); place = a[1] ":" a[2]; match($0, /function .[^ ]*./); name = substr($0, RSTART + 9, RLENGTH - 10) }
  /note: [0-9]+ lines including/ { match($0, /[0-9]+ lines/); n = substr($0, RSTART, RLENGTH - 6); if (!(place in seen)) { seen[place] = 1; print n "\t" name "\t" place } }
' | sed "s|$PWD/||" | sort -rn
