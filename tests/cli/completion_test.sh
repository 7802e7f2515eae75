#!/usr/bin/env bash
# What the bash completion of cilkprof, cilkprof-run and cilkprofd completes besides
# option names (those are docs_sync_test.sh's): profile and spill files, directories,
# the program and its own arguments after the run options, values after "--opt=",
# columns of --sort by view kind.
#
# usage: completion_test.sh BASH_COMPLETION COMPLETION_DIR
set -u
if (($# != 2)); then
    echo "usage: $0 BASH_COMPLETION COMPLETION_DIR" >&2
    exit 2
fi
source "$(dirname "${BASH_SOURCE[0]}")/docs_lib.sh"
docs_load_completion "$1" "$2/cilkprof.bash" "$2/cilkprofd.bash" || exit 1

scratch=$(mktemp -d "${TMPDIR:-/tmp}/cilkprof-completion.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
cd "$scratch" || exit 1
touch fib.cilkprof fib.1.cilkprof notes.txt cilkprof-4242.spill
mkdir profiles

failures=0
# expect LINE WORD...: completing LINE (the cursor at its end) offers every WORD; a
# WORD "!x" means x must not be offered.
expect() {
    local line=$1 word
    shift
    docs_complete_line "$line"
    for word in "$@"; do
        if [[ $word == !* ]]; then
            ! docs_offered "${word#!}" && continue
            echo "FAIL: '$line<Tab>' offers '${word#!}'; it offers: ${COMPREPLY[*]}"
        else
            docs_offered "$word" && continue
            echo "FAIL: '$line<Tab>' does not offer '$word'; it offers: ${COMPREPLY[*]}"
        fi
        ((failures++))
    done
}

# Commands, and nothing else, in the command's place.
expect "cilkprof " run view summary export import '!fib.cilkprof'
expect "cilkprof vi" view '!run'

# Profiles: *.cilkprof and directories, only where a profile goes.
expect "cilkprof view " top-down bottom-up flat callsites strands '!fib.cilkprof'
expect "cilkprof view top-down " fib.cilkprof fib.1.cilkprof profiles '!notes.txt' '!top-down'
expect "cilkprof view --format json --depth 3 bottom-up " fib.cilkprof '!notes.txt'
expect "cilkprof view top-down fib.cilkprof " '!fib.1.cilkprof'
expect "cilkprof summary " fib.cilkprof profiles '!notes.txt'
expect "cilkprof summary --top 5 f" fib.cilkprof fib.1.cilkprof
expect "cilkprof export --format cilkscale-csv " fib.cilkprof '!notes.txt'
expect "cilkprof export -o " notes.txt fib.cilkprof
expect "cilkprof run -o " fib.cilkprof profiles '!notes.txt'

# Spill files for import; its -o names a profile.
expect "cilkprof import " cilkprof-4242.spill profiles '!fib.cilkprof'
expect "cilkprof import -o " fib.cilkprof '!cilkprof-4242.spill'

# Values, also after "=".
expect "cilkprof run --clock=" cpu wall
expect "cilkprof run --workspan " separate same off
expect "cilkprof run --openmp=" auto libomp off
expect "cilkprof run --unwind=f" fp '!dwarf'
expect "cilkprof view --inline=f" fold '!keep'
expect "cilkprof summary --inline " keep fold
expect "cilkprof view callsites --sort " work_on_work span_on_span parallelism caller '!start'
expect "cilkprof view --sort " work_on_work
expect "cilkprof view strands --sort " work span start end '!work_on_work'
expect "cilkprof view top-down --depth " '!fib.cilkprof' '!--depth'

# The program: a command after the run options, with or without "--", then the
# program's own completion (ls's options here), never the run options again.
expect "cilkprof run ba" bash
expect "cilkprof run --clock wall -F 500 ba" bash
expect "cilkprof run --clock=wall -- ba" bash
expect "cilkprof run --clock=wall ba" bash
expect "cilkprof run --clock=wall bash -" '!--clock'
expect "cilkprof-run ba" bash
expect "cilkprof-run -o x.cilkprof ls --al" --all '!--clock'
expect "cilkprof run -- ls --al" --all
expect "cilkprof run --unwind fp ls -" '!--unwind' '!--clock'
expect "cilkprof-run --period 2ms bash -" '!--period' '!--clock'
expect "cilkprof-run --" --clock --period --version
expect "cilkprof run --" --clock '!--version'

# cilkprofd: a directory for --output-dir, sockets for --socket.
expect "cilkprofd --output-dir " profiles '!notes.txt' '!fib.cilkprof'
expect "cilkprofd --log-level=w" warn '!info'
expect "cilkprofd --" --socket --output-dir --version

if ((failures > 0)); then
    echo "$failures completion(s) wrong (cli/completion/*.bash)"
    exit 1
fi
echo "bash completion: files, programs and values as expected"
