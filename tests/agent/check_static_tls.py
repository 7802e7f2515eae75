#!/usr/bin/env python3
"""The agent's initial-exec TLS must fit in what glibc leaves for libraries loaded late.

An injected agent (cilkprof attach on a process started without it) is dlopen()ed into
a running program. Its initial-exec thread-locals (the signal handler's per-thread state:
no __tls_get_addr, which may allocate) then come out of glibc's static TLS surplus, which
is small (about 1.6 KB by default, shared with every other library the program loads
late): beyond it, dlopen fails with "cannot allocate memory in static TLS block". A
2 KB per-thread cache once did exactly that. So the agent keeps only pointers and words
there; this check bounds its PT_TLS segment.

Usage: check_static_tls.py AGENT_SO [MAX_BYTES]
"""
import re
import subprocess
import sys


def main() -> int:
    agent = sys.argv[1]
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 512
    out = subprocess.run(["readelf", "-lW", agent], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0] == "TLS":
            memsz = int(fields[5], 16)
            print(f"{agent}: PT_TLS memsz {memsz} bytes (bound {limit})")
            if memsz > limit:
                print("FAIL: the agent's initial-exec TLS outgrew the bound: keep large per-thread "
                      "state behind a pointer (see this script's docstring)")
                return 1
            return 0
    print(f"{agent}: no PT_TLS segment")
    return 0


if __name__ == "__main__":
    sys.exit(main())
