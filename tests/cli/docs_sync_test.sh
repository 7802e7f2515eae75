#!/usr/bin/env bash
# Keeps the manual pages and the bash completion in step with the tools: for every
# command, option and enumerated value that `cilkprof --help`, `cilkprof COMMAND
# --help`, `cilkprof-run --help` and `cilkprofd --help` print,
#   - the man page has an entry for it: a command under COMMANDS; an option under
#     OPTIONS (cilkprof: in the "COMMAND options" subsection, or "Options of every
#     command"), its enumerated values in that entry;
#   - the completion offers it: the commands after `cilkprof`, each option after
#     `-`, each value after its option (and the view kinds in the view's place).
# Prints every mismatch and fails if there is one.
#
# usage: docs_sync_test.sh CILKPROF CILKPROF_RUN CILKPROFD MAN_DIR BASH_COMPLETION
#                          COMPLETION_DIR
#   MAN_DIR: the configured pages (build/docs/man); BASH_COMPLETION: bash-completion's
#   bash_completion script; COMPLETION_DIR: cli/completion.
set -u
if (($# != 6)); then
    echo "usage: $0 CILKPROF CILKPROF_RUN CILKPROFD MAN_DIR BASH_COMPLETION COMPLETION_DIR" >&2
    exit 2
fi
cilkprof=$1 cilkprof_run=$2 cilkprofd=$3 man_dir=$4 bash_completion=$5 completion_dir=$6
source "$(dirname "${BASH_SOURCE[0]}")/docs_lib.sh"

for tool in "$cilkprof" "$cilkprof_run" "$cilkprofd"; do
    if [[ ! -x $tool ]]; then
        echo "$tool is not built; build the targets cilkprof, cilkprof-run and cilkprofd first" >&2
        exit 1
    fi
done
docs_load_completion "$bash_completion" "$completion_dir/cilkprof.bash" \
    "$completion_dir/cilkprofd.bash" || exit 1

failures=0 checked_commands=0 checked_options=0 checked_values=0
fail() {
    echo "FAIL: $*"
    ((failures++))
}

# Checks one tool's --help listing ($1, as docs_parse_help prints it) against the man
# page section text $2 (its options; $3: the text of the section that describes the
# commands) and the completion of the command line prefix in the remaining arguments.
# $page names the page in messages.
check_listing() {
    local listing=$1 options_text=$2 commands_text=$3
    shift 3
    local -a prefix=("$@")
    local kind name values value entry
    while read -r kind name values; do
        case $kind in
            command)
                ((checked_commands++))
                [[ -n $(docs_man_entry "$commands_text" "$name") ]] ||
                    fail "$page: the command '$name' has no entry under COMMANDS"
                docs_complete "${prefix[@]}" "" && docs_offered "$name" ||
                    fail "completion: '${prefix[*]} <Tab>' does not offer the command '$name'"
                ;;
            option)
                ((checked_options++))
                entry=$(docs_man_entry "$options_text" "$name")
                [[ -n $entry ]] ||
                    fail "$page: the option $name of '${prefix[*]}' has no entry under OPTIONS"
                docs_complete "${prefix[@]}" - && docs_offered "$name" ||
                    fail "completion: '${prefix[*]} -<Tab>' does not offer $name"
                for value in ${values//,/ }; do
                    ((checked_values++))
                    [[ -z $entry ]] || grep -qw -- "$value" <<<"$entry" ||
                        fail "$page: the entry of $name of '${prefix[*]}' does not name its value '$value'"
                    docs_complete "${prefix[@]}" "$name" "" && docs_offered "$value" ||
                        fail "completion: '${prefix[*]} $name <Tab>' does not offer '$value'"
                done
                ;;
            positional)
                for value in ${values//,/ }; do
                    ((checked_values++))
                    grep -qE -- "^ +$value( |\$)" <<<"$commands_text" ||
                        fail "$page: the value '$value' of the argument '$name' of '${prefix[*]}' has no entry"
                    docs_complete "${prefix[@]}" "" && docs_offered "$value" ||
                        fail "completion: '${prefix[*]} <Tab>' does not offer '$value'"
                done
                ;;
        esac
    done <<<"$listing"
}

# cilkprof: its commands and top-level options, then each command's options.
page="cilkprof.1"
man=$(docs_render_man "$man_dir/cilkprof.1")
commands_text=$(docs_man_section "$man" COMMANDS)
common_text=$(docs_man_section "$man" OPTIONS "Options of every command")
listing=$("$cilkprof" --help | docs_parse_help)
[[ $listing == *command* ]] || fail "'cilkprof --help' lists no commands: has its format changed?"
check_listing "$listing" "$common_text" "$commands_text" cilkprof
for command in $(awk '$1 == "command" { print $2 }' <<<"$listing"); do
    command_listing=$("$cilkprof" "$command" --help | docs_parse_help)
    [[ $command_listing == *option* ]] ||
        fail "'cilkprof $command --help' lists no options: has its format changed?"
    options_text=$(docs_man_section "$man" OPTIONS "$command options")
    [[ -n $options_text ]] || fail "$page: no subsection '$command options' under OPTIONS"
    # -h/--help is described once, under "Options of every command".
    check_listing "$command_listing" "$options_text"$'\n'"$common_text" \
        "$(docs_man_entry "$commands_text" "$command")" cilkprof "$command"
done

# cilkprof-run and cilkprofd: one OPTIONS section each.
page="cilkprof-run.1"
man=$(docs_render_man "$man_dir/cilkprof-run.1")
check_listing "$("$cilkprof_run" --help | docs_parse_help)" \
    "$(docs_man_section "$man" OPTIONS)" "" cilkprof-run

page="cilkprofd.8"
man=$(docs_render_man "$man_dir/cilkprofd.8")
check_listing "$("$cilkprofd" --help | docs_parse_help)" \
    "$(docs_man_section "$man" OPTIONS)" "" cilkprofd

if ((failures > 0)); then
    echo "$failures mismatch(es) between the tools' --help and docs/man or cli/completion:"
    echo "document each option in its man page (docs/man/*.in, docs/man/fragments/) and"
    echo "offer it in the completion (cli/completion/*.bash)."
    exit 1
fi
echo "man pages and bash completion match the --help of cilkprof, cilkprof-run and cilkprofd:"
echo "$checked_commands commands, $checked_options option names, $checked_values values"
