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
        --tcp-secret-file)
            _filedir
            return
            ;;
        --socket-mode)
            COMPREPLY=($(compgen -W '600 660 666' -- "$cur"))
            return
            ;;
        --allow-uid)
            COMPREPLY=($(compgen -u -- "$cur"))
            return
            ;;
        --tcp | --max-frame-bytes | --memory-budget | --max-connections-per-client | \
            --max-connections-per-uid | --max-profiles-per-minute | \
            --max-tcp-connections-per-minute | --drain-ms | --keep)
            return # HOST:PORT, numbers of bytes, counts, milliseconds: nothing to offer
            ;;
        --window)
            COMPREPLY=($(compgen -W '60s 10m 1h' -- "$cur"))
            return
            ;;
    esac
    $split && return

    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W '--socket --socket-mode --allow-uid --tcp --tcp-secret-file
            --output-dir --max-frame-bytes --memory-budget --max-connections-per-client
            --max-connections-per-uid --max-profiles-per-minute
            --max-tcp-connections-per-minute --log-level --drain-ms --window --keep -h
            --help --version' \
            -- "$cur"))
    fi
} &&
    complete -F _cilkprofd cilkprofd

# ex: filetype=sh
