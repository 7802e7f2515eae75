# bash completion for cilkprofd                                   -*- shell-script -*-
#
# Installed as share/bash-completion/completions/cilkprofd. The options mirror
# aggregator/daemon/daemon_options.cpp; the test cli_docs_sync fails when a flag
# printed by `cilkprofd --help` is not offered here.

_cilkprofd()
{
    local cur prev words cword split
    _init_completion -s || return

    case $prev in
        --socket)
            _filedir sock
            return
            ;;
        --output-dir)
            _filedir -d
            return
            ;;
        --log-level)
            COMPREPLY=($(compgen -W 'trace debug info warn error critical off' -- "$cur"))
            return
            ;;
        --tcp | --max-frame-bytes | --drain-ms)
            return # HOST:PORT, a number of bytes, milliseconds: nothing to offer
            ;;
    esac
    $split && return

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W '--socket --tcp --output-dir --max-frame-bytes --log-level
            --drain-ms -h --help --version' -- "$cur"))
    fi
} &&
    complete -F _cilkprofd cilkprofd

# ex: filetype=sh
