#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then the installed tree used as
# a user would (docs/install.md): examples/library built against it with
# find_package and with pkg-config and run, the man page rendered, the shell
# completions asked for commands, options and values. The man page and the
# bash completion are also checked against the options the binary's own
# --help lists, so a new option without its documentation fails here.
#   install_test.sh CMAKE BUILD_DIR SOURCE_DIR PI_HYDRATE
set -u
cmake=$1 build=$2 source=$3 bin=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $*"; }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { if eval "$2"; then ok "$1"; else bad "$1"; fi; }

prefix=$work/prefix
if ! "$cmake" --install "$build" --prefix "$prefix" > "$work/install.log" 2>&1; then
  cat "$work/install.log"
  echo "FAIL: cmake --install"
  exit 1
fi

# ---- What goes where (GNUInstallDirs).
libdir=$(dirname "$(find "$prefix" -name libpihydrate.a | head -1)")
for f in bin/pi-hydrate share/man/man1/pi-hydrate.1 share/bash-completion/completions/pi-hydrate \
  share/zsh/site-functions/_pi-hydrate share/fish/vendor_completions.d/pi-hydrate.fish \
  include/pihydrate/pihydrate.h; do
  check "installed $f" "[ -f '$prefix/$f' ]"
done
for f in libpihydrate.a cmake/pihydrate/pihydrateConfig.cmake cmake/pihydrate/pihydrateConfigVersion.cmake \
  cmake/pihydrate/pihydrateTargets.cmake pkgconfig/pihydrate.pc; do
  check "installed ${libdir#"$prefix"/}/$f" "[ -f '$libdir/$f' ]"
done
check "installed binary runs" "'$prefix/bin/pi-hydrate' --version | grep -q '^pi-hydrate '"

# ---- Public headers: only the library's, and none needs RapidJSON or cxxopts.
check "cli.h (the executable's) is not installed" "[ ! -e '$prefix/include/pihydrate/cli.h' ]"
check "no installed header includes RapidJSON or cxxopts" \
  "! grep -lE '#[[:space:]]*include[[:space:]]*[<\"](rapidjson|cxxopts)' '$prefix'/include/pihydrate/*.h"
missing_include=""
for h in "$prefix"/include/pihydrate/*.h; do
  for inc in $(sed -n 's/^#include "\(.*\)"$/\1/p' "$h"); do
    [ -f "$prefix/include/$inc" ] || missing_include+=" $(basename "$h"):$inc"
  done
done
check "every header's own includes are installed${missing_include}" "[ -z '$missing_include' ]"

# ---- examples/library against the installed package: CMake, then pkg-config.
mkdir -p "$work/cwd"
"$bin" --thread "$source/examples/thread.json" --cwd "$work/cwd" -o "$work/command.jsonl" 2> /dev/null
check "the command hydrates examples/thread.json" "[ -s '$work/command.jsonl' ]"
if "$cmake" -S "$source/examples/library" -B "$work/example" -DCMAKE_PREFIX_PATH="$prefix" \
  > "$work/example.log" 2>&1 && "$cmake" --build "$work/example" > "$work/example.log" 2>&1; then
  ok "examples/library builds with find_package(pihydrate)"
  "$work/example/hydrate_thread_example" "$source/examples/thread.json" "$work/cwd" "$work/cmake.jsonl" \
    > /dev/null 2>&1
  check "the find_package example writes the command's bytes" "cmp -s '$work/cmake.jsonl' '$work/command.jsonl'"
else
  cat "$work/example.log"
  bad "examples/library builds with find_package(pihydrate)"
fi
if command -v pkg-config > /dev/null; then
  export PKG_CONFIG_PATH=$libdir/pkgconfig
  check "pkg-config knows pihydrate $(pkg-config --modversion pihydrate 2>&1)" "pkg-config --exists pihydrate"
  # shellcheck disable=SC2046  # the flags are words
  if c++ -std=c++17 -o "$work/pc_example" "$source/examples/library/hydrate_thread_example.cc" \
    $(pkg-config --cflags --libs pihydrate) > "$work/pc.log" 2>&1; then
    ok "examples/library compiles with pkg-config --cflags --libs pihydrate"
    "$work/pc_example" "$source/examples/thread.json" "$work/cwd" "$work/pc.jsonl" > /dev/null 2>&1
    check "the pkg-config example writes the command's bytes" "cmp -s '$work/pc.jsonl' '$work/command.jsonl'"
  else
    cat "$work/pc.log"
    bad "examples/library compiles with pkg-config --cflags --libs pihydrate"
  fi
else
  bad "pkg-config is missing (tools/install-deps.sh installs it)"
fi

# ---- Options each command's --help lists (cxxopts: "  -o, --output arg  ...").
# tree and context are listed when this build has them.
help_options() { "$bin" "$@" --help 2> /dev/null | grep -E '^ +(-[a-z], )?--' | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }
help_options hydrate > "$work/options.hydrate"
check "the hydration's --help lists options" "[ \$(wc -l < '$work/options.hydrate') -gt 10 ]"
commands="hydrate validate"
help_options validate > "$work/options.validate"
for c in tree context; do
  if help_options "$c" > "$work/options.$c" && [ -s "$work/options.$c" ]; then commands+=" $c"; fi
done

# ---- The man page: renders at 80 columns without a roff warning, and names
# every command, option, exit code and environment variable.
man_page=$prefix/share/man/man1/pi-hydrate.1
if command -v man > /dev/null; then
  MANWIDTH=80 man --warnings -l "$man_page" > "$work/man.txt" 2> "$work/man.err"
  check "man -l renders it" "[ -s '$work/man.txt' ]"
  check "man --warnings reports nothing: $(head -c 300 "$work/man.err")" "[ ! -s '$work/man.err' ]"
else
  bad "man is missing (tools/install-deps.sh installs man-db)"
  : > "$work/man.txt"
fi
version=$("$bin" --version | cut -d' ' -f2)
th_names_version() { grep '^\.TH ' "$man_page" | grep -qF "\"pi-hydrate $version\""; }
check "the man page's .TH names version $version" th_names_version
check "groff -ww finds no problem" "[ -z \"\$(groff -ww -man -Tutf8 -z '$man_page' 2>&1)\" ]"
check "no line of the rendered page is wider than 80 columns" "[ \$(LC_ALL=C.UTF-8 wc -L < '$work/man.txt') -le 80 ]"
for section in SYNOPSIS DESCRIPTION COMMANDS OPTIONS 'EXIT STATUS' ENVIRONMENT EXAMPLES; do
  check "the man page has $section" "grep -q '^$section' '$work/man.txt'"
done
for word in hydrate validate tree context --thread --session --version --help PI_CODING_AGENT_DIR \
  PI_CODING_AGENT_SESSION_DIR HOME; do
  check "the man page names $word" "grep -qe '$word' '$work/man.txt'"
done
for code in 0 1 2; do
  check "the man page explains exit code $code" "grep -A1 'EXIT STATUS' -A12 '$work/man.txt' | grep -qE '^ +$code +[A-Z]'"
done
for c in $commands; do
  while read -r option; do
    check "the man page documents $c $option" "grep -qe '$option' '$work/man.txt'"
  done < "$work/options.$c"
done

# ---- bash completion: the function the script registers, driven as bash
# drives it (COMP_WORDS, COMP_CWORD), answers in COMPREPLY.
complete_bash() {  # the installed pi-hydrate on PATH: the completion asks it for formats and versions
  PATH="$prefix/bin:$PATH" bash --norc --noprofile -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
    _pi_hydrate; printf "%s\n" "${COMPREPLY[@]}"' _ "$prefix/share/bash-completion/completions/pi-hydrate" "$@"
}
offers() { # offers WORD COMMAND-LINE...: COMPREPLY holds WORD
  local want=$1
  shift
  complete_bash "$@" | grep -qxe "$want"
}
check "bash completion registers itself for pi-hydrate" \
  "bash --norc -c 'source \"\$1\"; complete -p pi-hydrate' _ '$prefix/share/bash-completion/completions/pi-hydrate' | grep -q _pi_hydrate"
for c in hydrate validate tree context --thread --session --version; do
  check "bash completion offers '$c' first" "offers '$c' pi-hydrate ''"
done
check "bash completion completes 'va' to validate" "[ \"\$(complete_bash pi-hydrate va)\" = validate ]"
for c in $commands; do
  line=(pi-hydrate "$c")
  [ "$c" = hydrate ] && line=(pi-hydrate --thread t.json)
  while read -r option; do
    check "bash completion offers $c $option" "offers '$option' ${line[*]} --"
  done < "$work/options.$c"
done
check "bash completion: --tools pair|flatten" "[ \"\$(complete_bash pi-hydrate --thread t.json --tools '' | tr '\n' ' ')\" = 'pair flatten ' ]"
check "bash completion: --tools=f" "[ \"\$(complete_bash pi-hydrate --thread t.json --tools = f)\" = flatten ]"
check "bash completion: validate --format" "[ \"\$(complete_bash pi-hydrate validate --format '' | tr '\n' ' ')\" = 'text json github ' ]"
check "bash completion: tree --format" "[ \"\$(complete_bash pi-hydrate tree --format '' | tr '\n' ' ')\" = 'text json ' ]"
check "bash completion: --pi-version" "[ \"\$(complete_bash pi-hydrate context --pi-version '' | tr '\n' ' ')\" = \"\$('$prefix/bin/pi-hydrate' --list-pi-versions | cut -f1 | tr '\n' ' ')\" ]"
check "bash completion: --pi-version 1.6" "offers 1.6 pi-hydrate context --pi-version ''"
check "bash completion: --from" "[ \"\$(complete_bash pi-hydrate --session s.jsonl --from '' | tr '\n' ' ')\" = \"\$('$prefix/bin/pi-hydrate' --list-formats | cut -f1 | tr '\n' ' ')\" ]"
check "bash completion: tree --from claude-code" "offers claude-code pi-hydrate tree --from ''"
check "bash completion: validate --level" "[ \"\$(complete_bash pi-hydrate validate --level '' | tr '\n' ' ')\" = 'load resume lint ' ]"
mkdir -p "$work/files/sub" && touch "$work/files/s.jsonl"
check "bash completion: file names for --thread" "offers '$work/files/s.jsonl' pi-hydrate --thread '$work/files/s'"
check "bash completion: file names for validate" "offers '$work/files/s.jsonl' pi-hydrate validate '$work/files/s'"
check "bash completion: only directories for --cwd" "[ \"\$(complete_bash pi-hydrate --thread t.json --cwd '$work/files/')\" = '$work/files/sub' ]"

# ---- zsh and fish: their syntax, when the shell is here.
for shell in zsh fish; do
  script=$prefix/share/zsh/site-functions/_pi-hydrate
  [ "$shell" = fish ] && script=$prefix/share/fish/vendor_completions.d/pi-hydrate.fish
  if command -v "$shell" > /dev/null; then
    check "$shell -n accepts the $shell completion" "$shell -n '$script'"
  else
    echo "skip: $shell is not installed; its completion's syntax is not checked"
  fi
done
if command -v fish > /dev/null; then
  check "fish completion: --tools pair|flatten" \
    "fish --no-config -c 'source $prefix/share/fish/vendor_completions.d/pi-hydrate.fish; complete -C \"pi-hydrate --tools \"' | cut -f1 | sort | tr '\n' ' ' | grep -qx 'flatten pair '"
fi

echo "install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
