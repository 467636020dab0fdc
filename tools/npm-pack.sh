#!/usr/bin/env bash
# Packs the npm package packaging/npm/pi-hydrate (docs/pi-package.md) with the static
# pi-hydrate for this machine inside it: one tarball, pi-hydrate-<version>.tgz, that
# puts `pi-hydrate` on PATH (npm install -g, npx) and is a pi package (/hydrate).
# Nothing is published.
#   tools/npm-pack.sh OUT_DIR                  build the static binary in build-npm/, then pack
#   tools/npm-pack.sh OUT_DIR --binary FILE    pack FILE (a static pi-hydrate) instead of building
# Prints the tarball's path. Needs cmake and a compiler (tools/install-deps.sh)
# unless --binary is given, and npm.
set -euo pipefail
source_dir=$(cd "$(dirname "$0")/.." && pwd)
die() { echo "npm-pack.sh: $*" >&2; exit 2; }

[ $# -ge 1 ] || die "usage: tools/npm-pack.sh OUT_DIR [--binary FILE]"
out=$1
shift
binary=
while [ $# -gt 0 ]; do
  case $1 in
    --binary) [ $# -ge 2 ] || die "--binary needs a file"; binary=$2; shift 2 ;;
    *) die "unknown option: $1" ;;
  esac
done
command -v npm >/dev/null 2>&1 || die "npm not found on PATH"

version=$(sed -n 's/^project(pihydrate VERSION \([0-9.]*\).*/\1/p' "$source_dir/CMakeLists.txt")
[ -n "$version" ] || die "no version in CMakeLists.txt's project()"

# The npm name of this machine's platform, as node's process.platform-process.arch.
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=linux-x64 ;;
  Linux-aarch64) platform=linux-arm64 ;;
  *) die "no npm platform name for $(uname -s)-$(uname -m)" ;;
esac

if [ -z "$binary" ]; then
  # Its own build dir, so a developer's build/ is neither used nor changed.
  build="$source_dir/build-npm"
  cmake -S "$source_dir" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPIHYDRATE_STATIC=ON \
        -DPIHYDRATE_BUILD_TESTS=OFF >/dev/null
  cmake --build "$build" -j"$(nproc)" --target pi-hydrate >/dev/null
  binary="$build/pi-hydrate"
fi
[ -x "$binary" ] || die "not an executable: $binary"
file -b "$binary" | grep -q 'statically linked' || die "$binary is not statically linked (build with -DPIHYDRATE_STATIC=ON)"
"$binary" --version | grep -q "$version" || die "$binary is not pi-hydrate $version: $("$binary" --version | head -1)"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cp -R "$source_dir/packaging/npm/pi-hydrate" "$stage/pi-hydrate"
pkg="$stage/pi-hydrate"
rm -rf "$pkg/vendor" "$pkg/node_modules"
mkdir -p "$pkg/vendor/$platform"
cp "$binary" "$pkg/vendor/$platform/pi-hydrate"
strip "$pkg/vendor/$platform/pi-hydrate" 2>/dev/null || true
chmod 755 "$pkg/vendor/$platform/pi-hydrate"
# The version is the project's (CMakeLists.txt), written into the staged copy only.
sed -i "s/\"version\": \"0.0.0-unset\"/\"version\": \"$version\"/" "$pkg/package.json"
grep -q "\"version\": \"$version\"" "$pkg/package.json" || die "could not set the version in package.json"

mkdir -p "$out"
out=$(cd "$out" && pwd)
tarball=$(cd "$pkg" && npm pack --silent --pack-destination "$out" | tail -1)
echo "$out/$tarball"
