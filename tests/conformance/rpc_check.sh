#!/usr/bin/env bash
# rpc_check.sh DEST VERSION FILE [CWD] — run the real pi CLI on a copy of FILE in RPC mode:
#   pi --offline --mode rpc --session COPY   with {"id":"1","type":"get_state"} and
#   {"id":"2","type":"get_messages"} on stdin, in an isolated HOME/PI_CODING_AGENT_DIR,
# process cwd CWD (default: the current directory). Prints one JSON line in the same shape as
# pi_load.mjs (context = the loaded messages as the CLI reports them). DEST is the folder given to
# install_pi.sh; VERSION e.g. 0.78.0 or 1.5.2. Extra options for pi_load.mjs may follow in
# PI_LOAD_OPTS (e.g. PI_LOAD_OPTS="--full --timeout 60").
set -euo pipefail
if [ $# -lt 3 ] || [ $# -gt 4 ]; then echo "usage: rpc_check.sh DEST VERSION FILE [CWD]" >&2; exit 2; fi
DEST=$1 VERSION=$2 FILE=$3 CWD=${4:-$PWD}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NODE="$DEST/node/bin/node"
[ -x "$NODE" ] || { echo "rpc_check.sh: $NODE missing; run install_pi.sh $DEST first" >&2; exit 2; }
[ -d "$DEST/pi-$VERSION" ] || { echo "rpc_check.sh: $DEST/pi-$VERSION missing; run install_pi.sh $DEST first" >&2; exit 2; }
# shellcheck disable=SC2086
exec "$NODE" "$HERE/pi_load.mjs" --rpc --pi "$DEST/pi-$VERSION" --cwd "$CWD" ${PI_LOAD_OPTS:-} "$FILE"
