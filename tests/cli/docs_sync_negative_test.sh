#!/usr/bin/env bash
# The sync check must fail when a tool gains an option nobody documented: runs
# docs_sync_test.sh against wrappers of the three tools whose --help lists one more
# option, --fake-undocumented on|off (in `cilkprof view`, cilkprof-run and cilkprofd),
# and expects it to fail naming that option, once for the man page and once for the
# completion of each tool.
#
# usage: docs_sync_negative_test.sh CILKPROF CILKPROF_RUN CILKPROFD MAN_DIR
#                                   BASH_COMPLETION COMPLETION_DIR
set -u
if (($# != 6)); then
    echo "usage: $0 CILKPROF CILKPROF_RUN CILKPROFD MAN_DIR BASH_COMPLETION COMPLETION_DIR" >&2
    exit 2
fi
here=$(dirname "${BASH_SOURCE[0]}")
scratch=$(mktemp -d "${TMPDIR:-/tmp}/cilkprof-docs-negative.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT

# wrap NAME REAL HELP_ARGS: a NAME in $scratch that runs REAL, adding the fake option
# after the "Options:" heading of the --help printed for HELP_ARGS.
wrap() {
    local name=$1 real=$2 help_args=$3
    cat >"$scratch/$name" <<EOF
#!/bin/sh
if [ "\$*" = "$help_args" ]; then
    "$real" "\$@" | sed '/^Options:/a\\
  --fake-undocumented TEXT:{on,off}=on  An option added without documentation'
    exit 0
fi
exec "$real" "\$@"
EOF
    chmod +x "$scratch/$name"
}
wrap cilkprof "$1" "view --help"
wrap cilkprof-run "$2" "--help"
wrap cilkprofd "$3" "--help"

output=$(bash "$here/docs_sync_test.sh" "$scratch/cilkprof" "$scratch/cilkprof-run" \
    "$scratch/cilkprofd" "$4" "$5" "$6")
status=$?
echo "$output"

failed=0
if ((status != 1)); then
    echo "FAIL: docs_sync_test.sh exited with $status, expected 1 (mismatches found)"
    failed=1
fi
for expected in \
    "cilkprof.1: the option --fake-undocumented of 'cilkprof view' has no entry" \
    "completion: 'cilkprof view -<Tab>' does not offer --fake-undocumented" \
    "completion: 'cilkprof view --fake-undocumented <Tab>' does not offer 'off'" \
    "cilkprof-run.1: the option --fake-undocumented of 'cilkprof-run' has no entry" \
    "completion: 'cilkprof-run -<Tab>' does not offer --fake-undocumented" \
    "cilkprofd.8: the option --fake-undocumented of 'cilkprofd' has no entry" \
    "completion: 'cilkprofd -<Tab>' does not offer --fake-undocumented"; do
    if [[ $output != *"$expected"* ]]; then
        echo "FAIL: docs_sync_test.sh did not report: $expected"
        failed=1
    fi
done
# Nothing else: the real options are all documented.
others=$(grep '^FAIL' <<<"$output" | grep -vc -- --fake-undocumented)
if ((others != 0)); then
    echo "FAIL: docs_sync_test.sh reported $others mismatch(es) besides the fake option"
    failed=1
fi
((failed == 0)) && echo "the undocumented option was reported for the man pages and the completion"
exit $failed
