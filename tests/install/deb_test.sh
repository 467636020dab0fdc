#!/usr/bin/env bash
# `cpack -G DEB` (docs/install.md): the package holds the binary, the man
# page, the completions, the headers, the library and its CMake and
# pkg-config files; its Depends names the shared libraries the binary needs;
# and the binary extracted from it runs and writes what the build's writes.
#   deb_test.sh CPACK BUILD_DIR SOURCE_DIR PI_HYDRATE
set -u
cpack=$1 build=$2 source=$3 bin=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

if ! "$cpack" --config "$build/CPackConfig.cmake" -G DEB -B "$work/out" > "$work/cpack.log" 2>&1; then
  cat "$work/cpack.log"
  echo "FAIL: cpack -G DEB"
  exit 1
fi
deb=$(find "$work/out" -maxdepth 1 -name '*.deb' | head -1)
check "cpack wrote a .deb ($(basename "$deb"))" "[ -f '$deb' ]"

dpkg-deb -c "$deb" | awk '{print $NF}' > "$work/contents"
for f in ./usr/bin/pi-hydrate ./usr/share/man/man1/pi-hydrate.1 ./usr/share/bash-completion/completions/pi-hydrate \
  ./usr/share/zsh/site-functions/_pi-hydrate ./usr/share/fish/vendor_completions.d/pi-hydrate.fish \
  ./usr/include/pihydrate/pihydrate.h; do
  check "the package holds $f" "grep -qxe '$f' '$work/contents'"
done
for f in libpihydrate.a cmake/pihydrate/pihydrateConfig.cmake pkgconfig/pihydrate.pc; do
  check "the package holds lib/.../$f" "grep -qE '^\./usr/lib/([^/]+/)?$f\$' '$work/contents'"
done

check "Package is pi-hydrate" "[ \"\$(dpkg-deb -f '$deb' Package)\" = pi-hydrate ]"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libc6 'libstdc\+\+6' 'libboost-filesystem[0-9.]+' 'libsqlite3-0'; do
  check "Depends names $lib" "echo '$depends' | grep -qE '(^|, )$lib( |,|\$)'"
done
# Every shared library the binary needs is named (by dpkg-shlibdeps or by hand).
check "Depends is not empty" "[ -n '$depends' ]"

dpkg-deb -x "$deb" "$work/root"
packaged=$work/root/usr/bin/pi-hydrate
check "the packaged binary runs: $("$packaged" --version 2>&1)" \
  "'$packaged' --version | grep -qE '^pi-hydrate [0-9.]+ \\(commit '"
check "the packaged binary is stripped" "file '$packaged' | grep -q ', stripped'"
mkdir -p "$work/cwd"
"$packaged" --thread "$source/examples/thread.json" --cwd "$work/cwd" -o - > "$work/deb.jsonl" 2> /dev/null
"$bin" --thread "$source/examples/thread.json" --cwd "$work/cwd" -o - > "$work/build.jsonl" 2> /dev/null
check "the packaged binary writes the build's bytes" "[ -s '$work/deb.jsonl' ] && cmp -s '$work/deb.jsonl' '$work/build.jsonl'"
lib=$(find "$work/root" -name libpihydrate.a | head -1)
check "the packaged library keeps its symbols" "nm -C --defined-only '$lib' 2>/dev/null | grep -q 'pihydrate::hydrate_thread'"

echo "deb_package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
