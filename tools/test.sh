#!/usr/bin/env bash
# Builds pi-hydrate and runs every test with CTest: unit, golden, and the
# conformance tests against the real pi (installed from the npm registry into
# build/pi on first use; docs/conformance.md).
#   tools/test.sh             release build in build/
#   tools/test.sh --sanitize  ASan + UBSan build in build-asan/
# Warnings are errors here, so a warning fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIHYDRATE_WERROR=ON)
if [ "${1:-}" = "--sanitize" ]; then
  build_dir=build-asan
  # The sanitizer build shares the release build's pi install (a few hundred MB).
  flags=(-DCMAKE_BUILD_TYPE=Debug -DPIHYDRATE_WERROR=ON -DPIHYDRATE_SANITIZE=ON -DPIHYDRATE_PI_DEST="$PWD/build/pi")
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:abort_on_error=1
fi

tools/install-deps.sh
cmake -S . -B "$build_dir" "${flags[@]}" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
