# fish completion for pi-hydrate (man pi-hydrate): commands, options, option
# values and file names. Installed as fish/vendor_completions.d/pi-hydrate.fish.
# The input formats (--from) and pi versions (--pi-version) are the
# program's own: it lists them (--list-formats, --list-pi-versions).

set -l commands hydrate validate tree context

# The command word, or none yet (an option first means the main job).
complete -c pi-hydrate -f -n "not __fish_seen_subcommand_from $commands" -a hydrate -d 'Hydrate a thread export, a session or an event capture'
complete -c pi-hydrate -f -n "not __fish_seen_subcommand_from $commands" -a validate -d 'Check session files the way pi loads them'
complete -c pi-hydrate -f -n "not __fish_seen_subcommand_from $commands" -a tree -d 'Show the session tree as pi reads it'
complete -c pi-hydrate -f -n "not __fish_seen_subcommand_from $commands" -a context -d 'Show the conversation pi will send'
complete -c pi-hydrate -n "not __fish_seen_subcommand_from $commands" -l version -d 'Print the version and commit'
complete -c pi-hydrate -n "not __fish_seen_subcommand_from $commands" -l list-formats -d 'Print the input formats'
complete -c pi-hydrate -n "not __fish_seen_subcommand_from $commands" -l list-pi-versions -d 'Print the pi versions'
complete -c pi-hydrate -s h -l help -d 'Print the options'

# Hydration: with `hydrate` or with no command word.
set -l hydrating "not __fish_seen_subcommand_from validate tree context"
complete -c pi-hydrate -n $hydrating -r -F -l thread -d 'Thread export to hydrate, or - for stdin'
complete -c pi-hydrate -n $hydrating -r -F -l session -d 'Session to hydrate, in any format pi-hydrate reads, or - for stdin'
complete -c pi-hydrate -n $hydrating -r -F -l events -d "Capture of pi's --mode json or rpc stdout, or - for stdin"
complete -c pi-hydrate -n $hydrating -x -a '(__fish_complete_directories)' -l cwd -d 'Working directory of the new session'
complete -c pi-hydrate -n $hydrating -r -F -s o -l output -d 'Output file, or - for stdout'
complete -c pi-hydrate -n $hydrating -x -a '(__fish_complete_directories)' -l session-dir -d 'Write DIR/<timestamp>_<id>.jsonl'
complete -c pi-hydrate -n $hydrating -x -a '(__fish_complete_directories)' -l agent-dir -d "Write into pi's layout under DIR/sessions"
complete -c pi-hydrate -n $hydrating -l force -d 'Replace an existing output file'
complete -c pi-hydrate -n $hydrating -l allow-missing-cwd -d 'Do not require --cwd to exist'
complete -c pi-hydrate -n $hydrating -l no-verify -d 'Do not check the output before writing it'
complete -c pi-hydrate -n $hydrating -x -a 'text json' -l report -d 'Summary on stderr'
complete -c pi-hydrate -n $hydrating -x -l leaf -d 'Write the branch ending at this entry id (OpenCode: the session id)'
complete -c pi-hydrate -n $hydrating -x -l label -d 'Write the branch ending at this label'
complete -c pi-hydrate -n $hydrating -x -a 'pair flatten' -l tools -d 'Tool calls'
complete -c pi-hydrate -n $hydrating -x -l flatten-max-chars -d 'With --tools flatten: longest result text kept'
complete -c pi-hydrate -n $hydrating -x -a 'keep drop' -l thinking -d 'Thinking blocks'
complete -c pi-hydrate -n $hydrating -l prune-compacted -d 'Leave out entries the latest compaction hides'
complete -c pi-hydrate -n $hydrating -x -l session-id -d 'Session id of the output'
complete -c pi-hydrate -n $hydrating -x -l timestamp -d 'Header timestamp of the output (ISO-8601)'
complete -c pi-hydrate -n $hydrating -x -a 'drop keep text' -l partial -d 'Thread, events: an interrupted chunk stream'
complete -c pi-hydrate -n $hydrating -l no-trailer -d 'Thread, events: no trailer entries'
complete -c pi-hydrate -n $hydrating -x -l max-line-bytes -d 'Longest session line read'
complete -c pi-hydrate -n $hydrating -x -l max-depth -d 'Deepest JSON nesting read'
complete -c pi-hydrate -n $hydrating -x -l max-entries -d 'Most entries read'

# --pi-version and --from: every command.
complete -c pi-hydrate -x -a '(pi-hydrate --list-pi-versions 2>/dev/null | cut -f1)' -l pi-version -d 'Read as this pi version does'
complete -c pi-hydrate -x -a '(pi-hydrate --list-formats 2>/dev/null | cut -f1,2)' -l from -d 'What the input is'

# validate
set -l validating "__fish_seen_subcommand_from validate"
complete -c pi-hydrate -n $validating -x -a 'load resume lint' -l level -d 'Report up to this level'
complete -c pi-hydrate -n $validating -l no-cwd-check -d 'Do not check that the header cwd exists'
complete -c pi-hydrate -n $validating -x -a '(__fish_complete_directories)' -l process-cwd -d 'Resolve a relative header cwd against DIR'
complete -c pi-hydrate -n $validating -x -a 'text json github' -l format -d 'Output format'
complete -c pi-hydrate -n $validating -l linear -d 'Report any branching as an error'
complete -c pi-hydrate -n $validating -x -l max-line-bytes -d 'Longest line checked'
complete -c pi-hydrate -n $validating -x -l max-depth -d 'Deepest JSON nesting checked'
complete -c pi-hydrate -n $validating -x -l max-entries -d 'Most entries checked per file'
complete -c pi-hydrate -n $validating -x -s j -l jobs -d 'Validate up to N files at once'
complete -c pi-hydrate -n $validating -l list-codes -d 'Print every diagnostic code'
complete -c pi-hydrate -n $validating -F

# tree and context
set -l viewing "__fish_seen_subcommand_from tree context"
complete -c pi-hydrate -n $viewing -x -a 'text json' -l format -d 'Output format'
complete -c pi-hydrate -n $viewing -F
complete -c pi-hydrate -n "__fish_seen_subcommand_from tree" -x -l width -d 'Cut text lines to N columns, 0 for never'
complete -c pi-hydrate -n "__fish_seen_subcommand_from context" -l full -d 'Print texts whole'
complete -c pi-hydrate -n "__fish_seen_subcommand_from context" -x -l leaf -d 'The context of the branch ending at this entry id'
complete -c pi-hydrate -n "__fish_seen_subcommand_from context" -x -l label -d 'The context of the branch ending at this label'
