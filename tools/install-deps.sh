#!/usr/bin/env bash
# Installs the Debian packages pi-hydrate builds and tests with, if missing.
# Nothing is downloaded at build time; this is the only install step.
#   tools/install-deps.sh          what tools/test.sh needs
#   tools/install-deps.sh --fuzz   also clang and its libFuzzer runtime (tools/fuzz.sh)
#   tools/install-deps.sh --format also clang-format (tools/format.sh)
set -euo pipefail

# python3 and npm run the conformance tests (npm installs node 22 and pi itself);
# git and pre-commit run the pre-commit hook's test (tests/precommit).
# The install tests (tests/install) use git (--version's commit), man-db and
# groff-base (rendering the man page), pkg-config, dpkg-dev (cpack's
# dpkg-shlibdeps computes the .deb's Depends) and file (the static binary).
packages=(g++ cmake make rapidjson-dev libcxxopts-dev libboost-filesystem-dev libsqlite3-dev libgtest-dev python3
  git pre-commit man-db groff-base pkg-config dpkg-dev file)
[ "${1:-}" = "--fuzz" ] && packages+=(clang libclang-rt-14-dev)
[ "${1:-}" = "--format" ] && packages+=(clang-format)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# npm may come from a node distribution rather than Debian's package.
command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
