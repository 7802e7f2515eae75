# bash completion for cilkprof and cilkprof-run                  -*- shell-script -*-
#
# Installed as share/bash-completion/completions/cilkprof and .../cilkprof-run (the same
# file: bash-completion loads it by either name). Needs bash-completion's helpers
# (_init_completion, _filedir, _command_offset).
#
# The commands, options and option values below mirror cli/src/app.cc; the test
# cli_docs_sync fails when a flag printed by --help is not offered here.

# Options of `run` (and of cilkprof-run) that take a value: the program's name is the
# first word that is neither an option nor one of these options' values, as
# SeparateProgram in app.cc decides.
_cilkprof_run_valued='-o --output --clock --period -F --freq --unwind --workspan --openmp'
_cilkprof_run_flags='-f --force --no-follow-fork --no-workspan --strands --timeline --standby -q --quiet -h --help'

# Completes the words of `cilkprof run` / `cilkprof-run` from COMP_WORDS index $1 on:
# the run options and their values up to the program, then the program (a command) and
# its own arguments (with the program's own completion). $2: extra options (cilkprof-run's
# --version).
_cilkprof_complete_run()
{
    local first=$1 extra=${2-} i
    # The scan runs on COMP_WORDS, the index space _command_offset works in, where
    # "--clock=wall" is three words ("--clock" "=" "wall").
    for ((i = first; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            --)
                _command_offset $((i + 1))
                return
                ;;
            -*)
                if [[ " $_cilkprof_run_valued " == *" ${COMP_WORDS[i]} "* ]]; then
                    [[ ${COMP_WORDS[i + 1]-} == = ]] && ((i++))
                    ((i++))
                fi
                ;;
            =) ((i++)) ;;
            *)
                _command_offset $i
                return
                ;;
        esac
    done

    case $prev in
        -o | --output)
            _filedir cilkprof
            return
            ;;
        --clock)
            COMPREPLY=($(compgen -W 'cpu wall' -- "$cur"))
            return
            ;;
        --unwind)
            COMPREPLY=($(compgen -W 'dwarf fp' -- "$cur"))
            return
            ;;
        --workspan)
            COMPREPLY=($(compgen -W 'separate same off' -- "$cur"))
            return
            ;;
        --openmp)
            COMPREPLY=($(compgen -W 'auto libomp off' -- "$cur"))
            return
            ;;
        --period | -F | --freq)
            return # a duration (1ms, 500us) or a frequency in Hz: nothing to offer
            ;;
    esac
    $split && return

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$_cilkprof_run_valued $_cilkprof_run_flags $extra" -- "$cur"))
    else
        _command_offset "$COMP_CWORD" # the program: a command name or a path
    fi
}

# The number of positional arguments of a cilkprof command before the word being
# completed: words from $1 to cword-1 that are neither options nor the value of one of
# the options in $2.
_cilkprof_count_positionals()
{
    local first=$1 valued=" $2 " i count=0
    for ((i = first; i < cword; i++)); do
        if [[ ${words[i]} == -* ]]; then
            [[ $valued == *" ${words[i]} "* ]] && ((i++))
        else
            ((count++))
        fi
    done
    echo $count
}

_cilkprof()
{
    local cur prev words cword split
    _init_completion -s || return

    local command="" at=0 i
    for ((i = 1; i < cword; i++)); do
        if [[ ${words[i]} != -* ]]; then
            command=${words[i]}
            at=$i
            break
        fi
    done

    if [[ -z $command ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W '-h --help --version' -- "$cur"))
        else
            COMPREPLY=($(compgen -W 'run attach detach view summary export flamegraph plot import' -- "$cur"))
        fi
        return
    fi

    local valued flags positionals
    case $command in
        run)
            local w
            for ((w = 0; w < COMP_CWORD; w++)); do
                [[ ${COMP_WORDS[w]} == run ]] && break
            done
            _cilkprof_complete_run $((w + 1))
            return
            ;;
        view)
            valued='--sort --depth --threshold --focus --metric --format --inline --buckets'
            flags='--hot-path -h --help'
            case $prev in
                --format)
                    COMPREPLY=($(compgen -W 'text json csv' -- "$cur"))
                    return
                    ;;
                --inline)
                    COMPREPLY=($(compgen -W 'keep fold' -- "$cur"))
                    return
                    ;;
                --sort)
                    local kind=""
                    for ((i = at + 1; i < cword; i++)); do
                        case ${words[i]} in
                            callsites | strands) kind=${words[i]} ;;
                        esac
                    done
                    case $kind in
                        strands) COMPREPLY=($(compgen -W 'work span count function start end' -- "$cur")) ;;
                        *) COMPREPLY=($(compgen -W 'work_on_work span_on_work work_on_span span_on_span
                            parallelism count caller callee file line kind' -- "$cur")) ;;
                    esac
                    return
                    ;;
                --depth | --threshold | --focus | --metric | --buckets)
                    return # a number, a function or a metric of the profile
                    ;;
            esac
            ;;
        summary)
            valued='--format --top --inline'
            flags='--what-if -h --help'
            case $prev in
                --format)
                    COMPREPLY=($(compgen -W 'text json' -- "$cur"))
                    return
                    ;;
                --inline)
                    COMPREPLY=($(compgen -W 'keep fold' -- "$cur"))
                    return
                    ;;
                --top)
                    return
                    ;;
            esac
            ;;
        export | flamegraph)
            valued='--format -o --output --metric'
            [[ $command == flamegraph ]] && valued='-o --output --metric'
            flags='--inverted -h --help'
            case $prev in
                --format)
                    COMPREPLY=($(compgen -W 'cilkscale-csv pprof folded svg chrome-trace speedscope' -- "$cur"))
                    return
                    ;;
                -o | --output)
                    _filedir
                    return
                    ;;
                --metric)
                    COMPREPLY=($(compgen -W 'work idleness overhead samples lock_wait lock_blame effort' -- "$cur"))
                    return
                    ;;
            esac
            ;;
        plot)
            valued='-o --output --workers'
            flags='--speedup -h --help'
            case $prev in
                -o | --output)
                    _filedir svg
                    return
                    ;;
                --workers)
                    return
                    ;;
            esac
            ;;
        attach)
            valued='-o --output --duration --clock --period -F --freq --unwind --daemon'
            flags='-f --force --no-workspan --timeline -q --quiet -h --help'
            case $prev in
                -o | --output)
                    _filedir cilkprof
                    return
                    ;;
                --clock)
                    COMPREPLY=($(compgen -W 'cpu wall' -- "$cur"))
                    return
                    ;;
                --unwind)
                    COMPREPLY=($(compgen -W 'dwarf fp' -- "$cur"))
                    return
                    ;;
                --daemon)
                    _filedir sock
                    return
                    ;;
                --duration | --period | -F | --freq)
                    return
                    ;;
            esac
            ;;
        detach)
            valued=''
            flags='-h --help'
            ;;
        import)
            valued='-o --output'
            flags='-f --force -q --quiet -h --help'
            case $prev in
                -o | --output)
                    _filedir cilkprof
                    return
                    ;;
            esac
            ;;
        *)
            return
            ;;
    esac
    $split && return

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$valued $flags" -- "$cur"))
        return
    fi
    positionals=$(_cilkprof_count_positionals $((at + 1)) "$valued")
    case $command:$positionals in
        view:0)
            COMPREPLY=($(compgen -W 'top-down bottom-up flat callsites strands locks timeline' -- "$cur"))
            ;;
        view:1 | summary:0 | export:0 | flamegraph:0)
            _filedir cilkprof
            ;;
        plot:*)
            _filedir cilkprof
            ;;
        import:0)
            _filedir spill
            ;;
        attach:0 | detach:0)
            COMPREPLY=($(compgen -W "$(command ps -e -o pid= 2>/dev/null)" -- "$cur"))
            ;;
    esac
} &&
    complete -F _cilkprof cilkprof

_cilkprof_run()
{
    local cur prev words cword split
    _init_completion -s || return
    _cilkprof_complete_run 1 --version
} &&
    complete -F _cilkprof_run cilkprof-run

# ex: filetype=sh
