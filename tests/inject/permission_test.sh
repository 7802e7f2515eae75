#!/bin/bash
# Another user's process: inject_tool run as an unprivileged test user against a
# process of root must be refused with the message that says what to do, and the
# target must go on untouched.
# usage: permission_test.sh INJECT_TOOL TEST_AGENT BLOCKED_READER
set -u
tool=$1 agent=$2 reader=$3
if [ "$(id -u)" != 0 ]; then
  echo "SKIP: needs root to create a test user and run a process of another user"
  exit 77
fi
user=cilkprof-inject-test
if ! id "$user" >/dev/null 2>&1; then
  useradd --system --no-create-home --shell /usr/sbin/nologin "$user" || { echo "SKIP: useradd failed"; exit 77; }
fi
work=$(mktemp -d)
trap 'exec 3>&- 2>/dev/null; kill "$target" 2>/dev/null; rm -rf "$work"' EXIT
mkfifo "$work/in"
"$reader" <"$work/in" >"$work/out" &
target=$!
exec 3>"$work/in"
until grep -q ready "$work/out"; do sleep 0.05; done
# The test user must be able to run the tool: copy it where it can.
cp "$tool" "$agent" "$work/" && chmod 755 "$work" "$work/$(basename "$tool")" "$work/$(basename "$agent")"
message=$(runuser -u "$user" -- "$work/$(basename "$tool")" "$target" "$work/$(basename "$agent")" 2>&1)
status=$?
echo "$message"
expected="inject_tool: process $target belongs to user root (uid 0) and you are $user (uid $(id -u "$user")): run \`cilkprof attach\` as that user, or as root (attaching to another user's process needs CAP_SYS_PTRACE)"
[ "$status" = 1 ] || { echo "FAIL: exit status $status, expected 1"; exit 1; }
[ "$message" = "$expected" ] || { echo "FAIL: expected: $expected"; exit 1; }
echo "after" >&3
exec 3>&-
wait "$target"
[ "$(cat "$work/out")" = "$(printf 'ready\nread: after\nerrno 42\neintr 0')" ] || { echo "FAIL: target output:"; cat "$work/out"; exit 1; }
echo "PASS"
