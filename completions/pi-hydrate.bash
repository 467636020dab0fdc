# bash completion for pi-hydrate (man pi-hydrate): commands, options, option
# values and file names. Plain bash: needs none of the bash-completion
# package's helpers. Installed as bash-completion/completions/pi-hydrate.
# The input formats (--from) and pi versions (--pi-version) are the
# program's own: it lists them (--list-formats, --list-pi-versions).

_pi_hydrate() {
  local cur="${COMP_WORDS[COMP_CWORD]}" prev="" i
  ((COMP_CWORD > 0)) && prev="${COMP_WORDS[COMP_CWORD - 1]}"
  # --option=value: bash splits at '=' (COMP_WORDBREAKS).
  if [[ "$prev" == "=" && COMP_CWORD -gt 1 ]]; then
    prev="${COMP_WORDS[COMP_CWORD - 2]}"
  elif [[ "$cur" == "=" ]]; then
    prev="${COMP_WORDS[COMP_CWORD - 1]}"
    cur=""
  fi

  # The command: the first word after the program name. An option there
  # means the main job (a hydration without the command word).
  local command=""
  if ((COMP_CWORD > 1)); then
    case "${COMP_WORDS[1]}" in
      validate | tree | context | hydrate) command="${COMP_WORDS[1]}" ;;
      --help | -h | --version | --list-formats | --list-pi-versions) return 0 ;;
      -*) command=hydrate ;;
    esac
  fi

  local hydrate_options="--thread --session --from --events --cwd -o --output --session-dir --agent-dir --force
    --allow-missing-cwd --no-verify --report --leaf --label --tools --flatten-max-chars --thinking
    --prune-compacted --session-id --timestamp --partial --no-trailer --pi-version --max-line-bytes
    --max-depth --max-entries --help"
  local validate_options="--level --pi-version --no-cwd-check --process-cwd --format --linear --from
    --max-line-bytes --max-depth --max-entries -j --jobs --list-codes --help"
  local tree_options="--pi-version --format --width --from --help"
  local context_options="--pi-version --format --full --leaf --label --from --help"

  # The value of the option before the cursor.
  local values=""
  case "$prev" in
    --tools) values="pair flatten" ;;
    --thinking) values="keep drop" ;;
    --report) values="text json" ;;
    --partial) values="drop keep text" ;;
    --from) values="$("${COMP_WORDS[0]}" --list-formats 2>/dev/null | cut -f1)" ;;
    --pi-version) values="$("${COMP_WORDS[0]}" --list-pi-versions 2>/dev/null | cut -f1)" ;;
    --level) values="load resume lint" ;;
    --format)
      if [[ "$command" == validate ]]; then values="text json github"; else values="text json"; fi ;;
    --cwd | --session-dir | --agent-dir | --process-cwd)
      mapfile -t COMPREPLY < <(compgen -d -- "$cur")
      return 0 ;;
    --thread | --session | --events | -o | --output)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      return 0 ;;
    --leaf | --label | --session-id | --timestamp | --flatten-max-chars | --max-line-bytes | --max-depth | \
      --max-entries | -j | --jobs | --width)
      COMPREPLY=()  # free text: an id, a label, a number
      return 0 ;;
  esac
  if [[ -n "$values" ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$values" -- "$cur")
    return 0
  fi

  if [[ -z "$command" ]]; then
    mapfile -t COMPREPLY < <(compgen -W "hydrate validate tree context --thread --session --events --help --version
      --list-formats --list-pi-versions" -- "$cur")
    return 0
  fi
  if [[ "$cur" == -* ]]; then
    local options
    case "$command" in
      hydrate) options="$hydrate_options" ;;
      validate) options="$validate_options" ;;
      tree) options="$tree_options" ;;
      context) options="$context_options" ;;
    esac
    mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
    return 0
  fi
  # Positional arguments: session files (and directories for validate).
  mapfile -t COMPREPLY < <(compgen -f -- "$cur")
}

complete -o filenames -F _pi_hydrate pi-hydrate
