#!/usr/bin/env python3
"""Structural check of a Trace Event Format file (the JSON object form), as Perfetto's
and chrome://tracing's importers need it:
  - {"traceEvents": [...]} with displayTimeUnit "ms" or "ns" when present;
  - every event has ph, ts (a number >= 0), pid and tid (integers), and a name;
  - "X" events have dur >= 0, and the X events of one thread nest (a slice that starts
    inside another ends inside it: the importers drop or mis-stack the others);
  - "B"/"E" events balance per thread, "i" events have a scope t, p or g;
  - flow events: every id has one "s" and one "f" (same name and category), f not
    before s;
  - "M" metadata names: process_name and thread_name carry args.name.
Times are compared exactly (parsed as decimals, not floats).

usage: check_chrome_trace.py TRACE.json [--min-slices N] [--min-flows N] [--min-threads N]
Prints one line per problem and exits 1 if there is one; else prints a summary.
"""
import argparse
import collections
import decimal
import json
import sys


def check(trace, problems):
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        problems.append('not the JSON object form: no "traceEvents" list')
        return collections.Counter(), 0, 0
    unit = trace.get("displayTimeUnit")
    if unit is not None and unit not in ("ms", "ns"):
        problems.append(f"displayTimeUnit {unit!r} is neither ms nor ns")
    counts = collections.Counter()
    slices = collections.defaultdict(list)   # (pid, tid) -> [(ts, dur, index)]
    open_b = collections.Counter()
    flows = collections.defaultdict(dict)     # id -> {"s": event, "f": event}
    threads = set()
    for index, event in enumerate(trace["traceEvents"]):
        where = f"event {index}"
        if not isinstance(event, dict):
            problems.append(f"{where}: not an object")
            continue
        missing = [key for key in ("ph", "ts", "pid", "tid", "name") if key not in event]
        if missing:
            problems.append(f"{where}: no {', '.join(missing)}")
            continue
        ph, ts = event["ph"], event["ts"]
        counts[ph] += 1
        if not isinstance(ts, (decimal.Decimal, int)) or ts < 0:
            problems.append(f"{where}: ts {ts!r} is not a number >= 0")
            continue
        if not isinstance(event["pid"], int) or not isinstance(event["tid"], int):
            problems.append(f"{where}: pid and tid must be integers")
            continue
        thread = (event["pid"], event["tid"])
        if ph == "X":
            dur = event.get("dur")
            if dur is None or dur < 0:
                problems.append(f"{where}: X event with dur {dur!r}")
                continue
            slices[thread].append((ts, dur, index))
            threads.add(thread)
        elif ph == "B":
            open_b[thread] += 1
        elif ph == "E":
            open_b[thread] -= 1
            if open_b[thread] < 0:
                problems.append(f"{where}: E without a B on thread {thread}")
                open_b[thread] = 0
        elif ph == "i" or ph == "I":
            if event.get("s", "t") not in ("t", "p", "g"):
                problems.append(f"{where}: instant scope {event.get('s')!r}")
        elif ph in ("s", "f"):
            if "id" not in event:
                problems.append(f"{where}: flow event without id")
                continue
            if ph in flows[event["id"]]:
                problems.append(f"{where}: a second '{ph}' for flow id {event['id']}")
            flows[event["id"]][ph] = event
        elif ph == "M":
            if event["name"] in ("process_name", "thread_name") and not event.get("args", {}).get("name"):
                problems.append(f"{where}: {event['name']} without args.name")
    for thread, count in open_b.items():
        if count:
            problems.append(f"thread {thread}: {count} B events never ended")
    for flow_id, ends in flows.items():
        if set(ends) != {"s", "f"}:
            problems.append(f"flow id {flow_id}: has {sorted(ends)} only")
            continue
        s, f = ends["s"], ends["f"]
        if (s["name"], s.get("cat")) != (f["name"], f.get("cat")):
            problems.append(f"flow id {flow_id}: s and f differ in name or category")
        if f["ts"] < s["ts"]:
            problems.append(f"flow id {flow_id}: ends before it starts")
    for thread, events in slices.items():
        stack = []  # ends of the enclosing slices
        for ts, dur, index in sorted(events, key=lambda e: (e[0], -e[1], e[2])):
            while stack and ts >= stack[-1]:
                stack.pop()
            if stack and ts + dur > stack[-1]:
                problems.append(f"event {index}: slice [{ts}, {ts + dur}] on thread {thread} "
                                f"overlaps the end {stack[-1]} of an enclosing slice")
            stack.append(ts + dur)
    return counts, len(threads), len(flows)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("--min-slices", type=int, default=0)
    parser.add_argument("--min-flows", type=int, default=0)
    parser.add_argument("--min-threads", type=int, default=0)
    args = parser.parse_args()
    with open(args.trace, encoding="utf-8") as f:
        try:
            trace = json.load(f, parse_float=decimal.Decimal)
        except json.JSONDecodeError as e:
            print(f"{args.trace}: not JSON: {e}")
            return 1
    problems = []
    counts, threads, flows = check(trace, problems)
    if counts["X"] < args.min_slices:
        problems.append(f"{counts['X']} X slices, expected at least {args.min_slices}")
    if flows < args.min_flows:
        problems.append(f"{flows} flows, expected at least {args.min_flows}")
    if threads < args.min_threads:
        problems.append(f"slices on {threads} threads, expected at least {args.min_threads}")
    for problem in problems:
        print(f"{args.trace}: {problem}")
    if problems:
        return 1
    print(f"{args.trace}: {sum(counts.values())} events ({dict(sorted(counts.items()))}), "
          f"slices on {threads} threads, {flows} flows: well formed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
