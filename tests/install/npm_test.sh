#!/usr/bin/env bash
# The npm package (packaging/npm/pi-hydrate, docs/pi-package.md): tools/npm-pack.sh packs
# it around a static pi-hydrate; `npm install -g` of the tarball into a temporary prefix
# and `npx` of it, both offline, run that binary with its arguments, streams and exit
# status; a platform the package has no binary for gets an error naming it.
#   npm_test.sh SOURCE_DIR STATIC_BINARY
# Skips (77) without npm.
set -u
source=$1 static=$2
command -v npm >/dev/null 2>&1 || { echo "npm not found: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# npm's cache and config inside the sandbox: nothing read from or written to the user's.
export npm_config_cache="$work/cache" npm_config_userconfig="$work/npmrc" npm_config_globalconfig="$work/npmrc-global"
export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false npm_config_offline=true
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

version=$(sed -n 's/^project(pihydrate VERSION \([0-9.]*\).*/\1/p' "$source/CMakeLists.txt")
tarball=$(bash "$source/tools/npm-pack.sh" "$work/out" --binary "$static" 2> "$work/pack.err")
check "npm-pack.sh packs pi-hydrate-$version.tgz" "[ '$tarball' = '$work/out/pi-hydrate-$version.tgz' ] && [ -s '$tarball' ]"
[ -s "$tarball" ] || { cat "$work/pack.err"; echo "npm_package: $passed passed, $failed failed"; exit 1; }
tar -tzf "$tarball" | sort > "$work/contents"
check "the tarball holds the linux-x64 binary, the launcher and the extension" \
  "grep -qx package/vendor/linux-x64/pi-hydrate '$work/contents' && grep -qx package/bin/pi-hydrate.js '$work/contents' && grep -qx package/extensions/hydrate.js '$work/contents'"
check "the tarball holds no node_modules and no lockfile" "! grep -q 'node_modules\|package-lock' '$work/contents'"
tar -xzf "$tarball" -C "$work" package/package.json
check "its package.json has version $version, the pi manifest and the pi-package keyword" \
  "node -e 'const p=require(process.argv[1]); process.exit(p.version===process.argv[2] && p.keywords.includes(\"pi-package\") && p.pi.extensions.length ? 0 : 1)' '$work/package/package.json' '$version'"
check "no registry address in packaging/npm or tools/npm-pack.sh" \
  "! grep -rqiE 'https?://|\"resolved\"' '$source/packaging/npm' '$source/tools/npm-pack.sh'"

# npm install -g into a prefix, offline.
npm install -g --prefix "$work/prefix" "$tarball" > "$work/install.log" 2>&1
check "npm install -g --offline --prefix installs it" "[ -x '$work/prefix/bin/pi-hydrate' ] || { cat '$work/install.log'; false; }"
installed="$work/prefix/bin/pi-hydrate"
"$static" --version > "$work/want-version" 2>&1
"$installed" --version > "$work/got-version" 2>&1
check "pi-hydrate --version from the prefix: $(head -1 "$work/got-version")" "cmp -s '$work/want-version' '$work/got-version'"
mkdir -p "$work/cwd"
PATH="$work/prefix/bin:$PATH" pi-hydrate --thread "$source/examples/thread.json" --cwd "$work/cwd" -o "$work/t.jsonl" 2> "$work/t.err"
got=$?
check "it hydrates examples/thread.json from PATH (exit 0, a session written)" "[ $got -eq 0 ] && head -1 '$work/t.jsonl' | grep -q '\"type\":\"session\"'"
"$installed" --thread "$work/missing.json" --cwd "$work/cwd" -o "$work/m.jsonl" 2> "$work/m-got.err"
got=$?
"$static" --thread "$work/missing.json" --cwd "$work/cwd" -o "$work/m.jsonl" 2> "$work/m-want.err"
want=$?
check "a failing run keeps the binary's exit status ($got, the binary's $want) and stderr" \
  "[ $got -eq $want ] && [ $got -ne 0 ] && cmp -s '$work/m-got.err' '$work/m-want.err'"

# npx from the local tarball, offline, with an empty cache.
(cd "$work/cwd" && npx --yes --package "$tarball" -- pi-hydrate --version) > "$work/npx-version" 2> "$work/npx.err"
check "npx --package ./pi-hydrate-$version.tgz pi-hydrate --version: $(head -1 "$work/npx-version")" \
  "cmp -s '$work/want-version' '$work/npx-version' || { cat '$work/npx.err'; false; }"

# A platform without a binary.
PIHYDRATE_NPM_PLATFORM=win32-arm64 "$installed" --version > "$work/np.out" 2> "$work/np.err"
got=$?
check "on win32-arm64: exit 2 and an error naming it and what the package has: $(head -c 120 "$work/np.err")" \
  "[ $got -eq 2 ] && [ ! -s '$work/np.out' ] && grep -q 'no binary for win32-arm64' '$work/np.err' && grep -q 'it has: linux-x64' '$work/np.err'"
# The picking function itself: a vendor folder without the platform, and an entry that is not executable.
mkdir -p "$work/vendor/linux-x64" "$work/vendor/darwin-arm64"
cp "$static" "$work/vendor/linux-x64/pi-hydrate"
echo 'not a binary' > "$work/vendor/darwin-arm64/pi-hydrate"
check "binaryPath picks linux-x64, refuses darwin-arm64 (not executable) and names what it has" \
  "node -e '
    const b = require(process.argv[1]);
    const v = process.argv[2];
    const ok = b.binaryPath(\"linux-x64\", v) === v + \"/linux-x64/pi-hydrate\";
    let msg = \"\";
    try { b.binaryPath(\"darwin-arm64\", v); } catch (e) { msg = e instanceof b.NoBinaryError ? e.message : \"\"; }
    const forced = b.platformKey({PIHYDRATE_NPM_PLATFORM: \"aix-ppc64\"}, \"linux\", \"x64\") === \"aix-ppc64\";
    const own = b.platformKey({}, \"linux\", \"x64\") === \"linux-x64\";
    process.exit(ok && /no binary for darwin-arm64 \\(it has: linux-x64\\)/.test(msg) && forced && own ? 0 : 1);
  ' '$work/prefix/lib/node_modules/pi-hydrate/lib/binary.js' '$work/vendor'"

# What /hydrate completes FILE from: each agent's session files under HOME, newest first, with ~.
h="$work/home"
mkdir -p "$h/.claude/projects/-repo/sub" "$h/.codex/sessions/2026/11/27" "$h/.gemini/tmp/repo/chats" \
         "$h/.qwen/projects/-repo/chats" "$h/.local/share/opencode"
touch -d '2026-11-20 10:00' "$h/.claude/projects/-repo/a.jsonl"
touch -d '2026-11-20 10:00' "$h/.claude/projects/-repo/sub/agent.jsonl"   # deeper than a transcript
touch -d '2026-11-25 10:00' "$h/.codex/sessions/2026/11/27/rollout-1.jsonl"
touch -d '2026-11-25 10:00' "$h/.codex/sessions/2026/11/27/notes.jsonl"    # not a rollout
touch -d '2026-11-22 10:00' "$h/.gemini/tmp/repo/chats/session-1.jsonl"
touch -d '2026-11-21 10:00' "$h/.qwen/projects/-repo/chats/q.jsonl"
touch -d '2026-11-26 10:00' "$h/.local/share/opencode/opencode.db"
node -e 'const s = require(process.argv[1]); console.log(s.sessionFiles(process.argv[2]).map((f) => f.agent + " " + f.value).join("\n"))' \
  "$work/prefix/lib/node_modules/pi-hydrate/lib/sessions.js" "$h" > "$work/completions" 2>&1
printf '%s\n' "OpenCode ~/.local/share/opencode/opencode.db" "Codex ~/.codex/sessions/2026/11/27/rollout-1.jsonl" \
  "Gemini CLI ~/.gemini/tmp/repo/chats/session-1.jsonl" "Qwen Code ~/.qwen/projects/-repo/chats/q.jsonl" \
  "Claude Code ~/.claude/projects/-repo/a.jsonl" > "$work/completions-want"
check "the completions: the five agents' files, newest first" \
  "cmp -s '$work/completions' '$work/completions-want' || diff '$work/completions-want' '$work/completions'"

echo "npm_package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
