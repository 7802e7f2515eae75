#!/usr/bin/env bash
# `cmake --install` puts the man pages and the bash completion where man and
# bash-completion look for them under the prefix: `MANPATH=<prefix>/share/man man -w`
# finds each page, and bash-completion, given <prefix>/share in XDG_DATA_DIRS, loads
# the completion of each command by its name on first use.
#
# usage: docs_install_test.sh CMAKE BUILD_DIR BASH_COMPLETION
#   Installs only the components "man" and "bash-completion" of BUILD_DIR, into a
#   temporary prefix.
set -u
if (($# != 3)); then
    echo "usage: $0 CMAKE BUILD_DIR BASH_COMPLETION" >&2
    exit 2
fi
cmake=$1 build=$2 bash_completion=$3
prefix=$(mktemp -d "${TMPDIR:-/tmp}/cilkprof-install.XXXXXX") || exit 1
trap 'rm -rf "$prefix"' EXIT

failures=0
fail() {
    echo "FAIL: $*"
    ((failures++))
}

for component in man bash-completion; do
    "$cmake" --install "$build" --prefix "$prefix" --component "$component" >/dev/null ||
        fail "cmake --install --component $component failed"
done

# Each page where man finds it.
for page in 1:cilkprof 1:cilkprof-run 8:cilkprofd; do
    section=${page%%:*} name=${page#*:}
    expected=$prefix/share/man/man$section/$name.$section
    [[ -f $expected ]] || fail "$expected was not installed"
    found=$(MANPATH=$prefix/share/man man -w "$section" "$name" 2>&1)
    [[ $found == "$expected" ]] ||
        fail "MANPATH=$prefix/share/man man -w $section $name: expected $expected, got: $found"
done

# The completions where pkg-config says bash-completion looks under this prefix.
completions=$(pkg-config --define-variable=datadir="$prefix/share" \
    --variable=completionsdir bash-completion)
[[ $completions == "$prefix/share/bash-completion/completions" ]] ||
    fail "bash-completion's completionsdir under the prefix is $completions"
for command in cilkprof cilkprof-run cilkprofd; do
    [[ -f $completions/$command ]] || fail "$completions/$command was not installed"
    # A fresh shell, as a user's: no completion loaded until the command is completed.
    registered=$(XDG_DATA_DIRS=$prefix/share BASH_COMPLETION_USER_DIR=$prefix/none \
        bash -c 'source "$1" && __load_completion "$2" && complete -p "$2"' _ \
        "$bash_completion" "$command" 2>&1)
    [[ $registered == "complete -F _${command//-/_} $command" ]] ||
        fail "bash-completion did not load the completion of $command from $completions: $registered"
done

if ((failures > 0)); then
    echo "$failures problem(s) with the installed man pages or completions"
    exit 1
fi
echo "installed: man pages found by man -w, completions loaded by bash-completion"
