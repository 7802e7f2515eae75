#!/usr/bin/env python3
"""End-to-end work and span of OpenMP task graphs (issue 17; docs/OPENMP.md "Work and
span of task graphs").

Runs workspan_dag_program (two OpenMP threads) under `cilkprof run` with the counter
clock (CILKPROF_WS_CLOCK=counter: time advances only through cilkprof_charge) and
checks, exactly, against the dag the program runs (modelled below):
  `cilkprof summary --format json`        work, span, burdened span, tasks (spawns),
                                          the model ("openmp tasks (LLVM OMP ...)");
  `cilkprof view callsites --format json` per task-creation site (kind spawn): count,
                                          work and span of the top-most tasks (on work
                                          and on the critical path), and the
                                          function holding the `task` pragma.
--workspan MODE is cilkprof run's: separate (the default: a second, instrumented run
grafted into the sampled run's profile), same, or off (no figures at all).
"""
import argparse
import json
import os
import subprocess
import sys


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def json_of(cmd):
    r = run(cmd, timeout=120)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {r.stderr}")
    return json.loads(r.stdout)


def longest(paths):
    """The longest of (span, profile) paths, as a join takes it: the profile (site ->
    [work, span] of the top-most tasks on the path) goes with the longest span. A tie
    between different profiles would make the measured one schedule-dependent."""
    best = max(span for span, _ in paths)
    profiles = [prof for span, prof in paths if span == best]
    if any(prof != profiles[0] for prof in profiles):
        raise SystemExit(f"the model's dag has two longest paths with different profiles: {profiles}")
    return best, profiles[0]


class Sites:
    """Per creation site: tasks created, and over the top-most ones (no ancestor task
    created at the same site) the work of their subtrees and their spans; a top-most
    task's entry joins the profile of its longest path ("prof", from its start)."""

    def __init__(self):
        self.rows = {}

    def task(self, site, chain, body):
        row = self.rows.setdefault(site, {"count": 0, "work_on_work": 0, "span_on_work": 0, "bspan": 0})
        row["count"] += 1
        top = site not in chain
        result = body(chain + [site] if top else chain)
        if top:
            row["work_on_work"] += result["work"]
            row["span_on_work"] += result["span"]
            row["bspan"] += result["bspan"]
            prof = {k: list(v) for k, v in result["prof"].items()}
            entry = prof.setdefault(site, [0, 0])
            entry[0] += result["work"]
            entry[1] += result["span"]
            result = dict(result, prof=prof)
        return result


def fib_model(n, burden, sites, chain):
    """fib(n) of the program, from its task's start: work, span, burdened span. A child
    starts at its creator's span so far (burdened: plus the burden, which the creator
    pays too); the taskwait joins both children."""
    if n < 2:
        return {"work": 1, "span": 1, "bspan": 1, "tasks": 0, "prof": {}}
    work, span, bspan, tasks = 0, 0, 0, 0
    ends = []
    for site, m in (("fib-1", n - 1), ("fib-2", n - 2)):
        work, span, bspan = work + 1, span + 1, bspan + 1
        child = sites.task(site, chain, lambda c, m=m: fib_model(m, burden, sites, c))
        ends.append((span + child["span"], bspan + burden + child["bspan"], child["prof"]))
        bspan += burden
        work += child["work"]
        tasks += 1 + child["tasks"]
    span, prof = longest([(span, {})] + [(e[0], e[2]) for e in ends])
    bspan = max([bspan] + [e[1] for e in ends]) + 1
    return {"work": work + 1, "span": span + 1, "bspan": bspan, "tasks": tasks, "prof": prof}


def group_model(burden, sites, chain):
    """group(): 5 units; a taskgroup of child(i) tasks (10 (i + 1) units, a grandchild
    of 7 units they do not wait for, 1 unit); the group's end joins all; 3 units."""
    work = span = bspan = 5
    tasks = 0
    ends = []
    for i in range(4):
        start_span, start_bspan = span, bspan + burden
        bspan += burden
        tasks += 1

        def child(c, i=i):
            w = s = b = 10 * (i + 1)
            g = sites.task("grandchild", c, lambda _c: {"work": 7, "span": 7, "bspan": 7, "prof": {}})
            # The grandchild is joined by the taskgroup, not by its creator.
            g_end = (s + 7, b + burden + 7, g["prof"])
            return {"work": w + 7 + 1, "span": s + 1, "bspan": b + burden + 1, "g_end": g_end, "prof": {}}

        r = sites.task("child", chain, child)
        tasks += 1
        work += r["work"]
        ends.append((start_span + r["span"], start_bspan + r["bspan"], r["prof"]))
        ends.append((start_span + r["g_end"][0], start_bspan + r["g_end"][1], r["g_end"][2]))
    span, prof = longest([(span, {})] + [(e[0], e[2]) for e in ends])
    bspan = max([bspan] + [e[1] for e in ends]) + 3
    return {"work": work + 3, "span": span + 3, "bspan": bspan, "tasks": tasks, "prof": prof}


def expected(what, n, burden):
    sites = Sites()
    regions = []
    if what in ("fib", "both"):
        regions.append(fib_model(n, burden, sites, []))
    if what in ("group", "both"):
        regions.append(group_model(burden, sites, []))
    # Top-level computations (the outermost regions) compose in series.
    total = {k: sum(r[k] for r in regions) for k in ("work", "span", "bspan", "tasks")}
    # On-span: the top-most tasks on each region's critical path.
    for row in sites.rows.values():
        row["work_on_span"] = row["span_on_span"] = 0
    for r in regions:
        for site, (work, span) in r["prof"].items():
            sites.rows[site]["work_on_span"] += work
            sites.rows[site]["span_on_span"] += span
    return total, sites.rows


# The function each site's `task` pragma is in (the callsites view's caller).
SITE_CALLER = {"fib-1": "fib(int)", "fib-2": "fib(int)", "child": "group()", "grandchild": "child(int)"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cilkprof", required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--what", default="both")
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--burden", type=int, default=11)
    ap.add_argument("--workspan", default="separate", choices=["separate", "same", "off"])
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()

    os.makedirs(args.workdir, exist_ok=True)
    profile = os.path.join(args.workdir, "dag.cilkprof")
    env = dict(os.environ, CILKPROF_AGENT=args.agent, OMP_NUM_THREADS="2", CILKPROF_WS_CLOCK="counter",
               CILKPROF_BURDEN=str(args.burden))
    for name in ("OMP_TOOL", "CILKPROF_WORKSPAN"):
        env.pop(name, None)
    cmd = [args.cilkprof, "run", "-q", "-f", "-o", profile, "--workspan=" + args.workspan, "--",
           args.program, args.what, str(args.n)]
    r = run(cmd, env=env, timeout=600)
    if r.returncode != 0 or "ok" not in r.stdout.split():
        print("the profiled program failed:", r.returncode, r.stdout[-2000:], r.stderr[-2000:])
        return 1
    if r.stderr.strip():
        print("cilkprof run said:", r.stderr)
        return 1

    failures = []
    summary = json_of([args.cilkprof, "summary", "--format", "json", profile])
    if args.workspan == "off":
        if "span" in summary:
            failures.append(f"--workspan=off, yet the summary has a span: {summary.get('span')}")
        sites = run([args.cilkprof, "view", "callsites", profile])
        if sites.returncode == 0:
            failures.append("--workspan=off, yet `view callsites` shows sites")
    else:
        total, rows = expected(args.what, args.n, args.burden)
        for key, want in (("work", total["work"]), ("span", total["span"]), ("burdened_span", total["bspan"]),
                          ("spawns", total["tasks"])):
            got = summary.get(key)
            if got is None or float(got) != float(want):
                failures.append(f"summary {key}: {got}, expected {want}")
        if summary.get("parallelism") is None or abs(summary["parallelism"] - total["work"] / total["span"]) > 1e-9:
            failures.append(f"summary parallelism: {summary.get('parallelism')}, expected {total['work'] / total['span']}")
        text = run([args.cilkprof, "summary", profile], timeout=120).stdout
        if "openmp tasks (LLVM OMP" not in text:
            failures.append("the summary does not name the model 'openmp tasks (LLVM OMP ...)':\n" + text)

        got_rows = json_of([args.cilkprof, "view", "callsites", "--format", "json", profile])
        columns = ("work_on_work", "span_on_work", "work_on_span", "span_on_span")
        got = sorted((row["caller"], row["kind"], int(row["count"])) + tuple(float(row[c]) for c in columns)
                     for row in got_rows)
        want = sorted((SITE_CALLER[site], "spawn", row["count"]) + tuple(float(row[c]) for c in columns)
                      for site, row in rows.items())
        # Callers are the demangled names (the anonymous namespace's prefix included).
        got_short = sorted((row[0].replace("(anonymous namespace)::", ""),) + row[1:] for row in got)
        if got_short != want:
            failures.append("view callsites rows:\n  got      " + "\n           ".join(map(str, got_short)) +
                            "\n  expected " + "\n           ".join(map(str, want)))

    for f in failures:
        print("FAIL:", f)
    if not failures and args.workspan != "off":
        print("work/span exact:", json.dumps({k: summary.get(k) for k in ("work", "span", "burdened_span", "spawns",
                                                                             "syncs", "parallelism")}))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
