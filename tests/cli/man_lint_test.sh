#!/usr/bin/env bash
# The configured man pages render cleanly: no groff warning (groff -man -ww -z, and
# man -l with all warnings on), no line wider than an 80-column terminal, every @VAR@
# substituted, the sections a man page is expected to have, and a NAME line that
# whatis/apropos can index (lexgrog).
#
# usage: man_lint_test.sh PAGE...
set -u
if (($# == 0)); then
    echo "usage: $0 PAGE..." >&2
    exit 2
fi

failures=0
fail() {
    echo "FAIL: $*"
    ((failures++))
}

for page in "$@"; do
    name=$(basename "$page")
    if [[ ! -f $page ]]; then
        fail "$page does not exist (configure the build: docs/man/CMakeLists.txt makes it)"
        continue
    fi
    warnings=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
    [[ -z $warnings ]] || fail "$name: groff -man -ww reports:"$'\n'"$warnings"
    warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=w -l "$page" 2>&1 >/dev/null)
    [[ -z $warnings ]] || fail "$name: man -l reports:"$'\n'"$warnings"

    text=$(LC_ALL=C MANWIDTH=80 man -l "$page" 2>/dev/null | col -bx)
    wide=$(awk 'length($0) > 80 { printf "  %d columns: %s\n", length($0), $0 }' <<<"$text")
    [[ -z $wide ]] || fail "$name: lines wider than 80 columns (break them, e.g. with \\e in .EX):"$'\n'"$wide"

    unconfigured=$(grep -o '@[A-Za-z_]*@' "$page" | sort -u | tr '\n' ' ')
    [[ -z $unconfigured ]] || fail "$name: unconfigured placeholders: $unconfigured"

    sections=(NAME SYNOPSIS DESCRIPTION OPTIONS ENVIRONMENT FILES "EXIT STATUS" EXAMPLES "SEE ALSO")
    [[ $name == cilkprof.1 ]] && sections+=(COMMANDS)
    for section in "${sections[@]}"; do
        grep -qx -- "$section" <<<"$text" || fail "$name: no $section section"
    done

    whatis=$(lexgrog "$page" 2>&1)
    [[ $whatis == *"\"${name%.*} - "* ]] || fail "$name: lexgrog cannot read its NAME line: $whatis"
done

if ((failures > 0)); then
    echo "$failures problem(s) in the man pages (docs/man)"
    exit 1
fi
echo "man pages render without warnings: $*"
