#!/usr/bin/env bash
# Builds pi-hydrate and runs every test with CTest: unit, golden, and the
# conformance tests against the real pi (installed from the npm registry into
# build/pi while the build runs; docs/conformance.md).
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
# The release build's tests run the real pi: install it (tests/conformance/install_pi.sh, mostly a
# wait on the npm registry) while the build runs, not while the tests wait for it. The CTest fixture
# conformance_install_pi then finds it installed, or installs it again and fails loudly.
pi_install=
if [ "$build_dir" = build ] && grep -q '^PIHYDRATE_CONFORMANCE:BOOL=ON' "$build_dir/CMakeCache.txt"; then
  pi_dest=$(sed -n 's/^PIHYDRATE_PI_DEST:PATH=//p' "$build_dir/CMakeCache.txt")
  bash tests/conformance/install_pi.sh "$pi_dest" >"$build_dir/install_pi.log" 2>&1 &
  pi_install=$!
fi
build_status=0
cmake --build "$build_dir" -j "$(nproc)" || build_status=$?
if [ -n "$pi_install" ]; then
  wait "$pi_install" || echo "test.sh: installing pi failed (see $build_dir/install_pi.log); conformance_install_pi will say why" >&2
fi
[ "$build_status" -eq 0 ] || exit "$build_status"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
