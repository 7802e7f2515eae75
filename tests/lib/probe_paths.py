"""Checks that every cilkprof_probe() of a probe program lies on its exact logical path.

Shared by tests/logical/check_probe_paths.py (the Cilk runtime) and
tests/ompt/check_task_paths.py (OpenMP tasks on libomp). A path is rendered as
"edge:name" tokens (the view's function names and their call/spawn/task edges) joined
by newlines, from main down; a case maps regular expressions of whole paths to the
number of probes expected on each.
"""
import json
import os
import re
import subprocess


def lines(*tokens):
    return "\n".join(tokens)


def walk(node, prefix, out):
    """(path, probes) of every node of the top-down JSON tree with exclusive probes."""
    name = node.get("name", "")
    edge = node.get("edge", "call")
    path = prefix + [edge + ":" + name] if name != "<program root>" else prefix
    probe = node.get("metrics", {}).get("probe", {}).get("exclusive", 0)
    if probe:
        out.append((path, probe))
    for child in node.get("children", []):
        walk(child, path, out)


def render(path):
    # Everything above main (libc start-up) is physical context, not checked.
    for i, token in enumerate(path):
        if token == "call:main":
            return "\n".join(path[i:])
    return "\n".join(path)


def check(args, program_args, env, total_expected, shapes):
    """Runs `cilkprof run` on the program (args: cilkprof, program, unwind, workdir,
    case), reads the probe tree and checks:
      * the number of probes recorded equals the number of probe calls made;
      * every probe lies on exactly one expected path (a regular expression of shapes);
      * every expected path carries exactly as many probes as the program takes it.
    Prints the outcome; returns the exit status (0: every probe on its path)."""
    os.makedirs(args.workdir, exist_ok=True)
    profile = os.path.join(args.workdir, "probe.cilkprof")
    run = subprocess.run([args.cilkprof, "run", "-q", "-f", "-o", profile, "--unwind", args.unwind,
                          "--", args.program] + program_args,
                         env=env, capture_output=True, text=True, timeout=100)
    if run.returncode != 0:
        print("the profiled program failed:", run.returncode, run.stdout, run.stderr)
        return 1
    view = subprocess.run([args.cilkprof, "view", "top-down", "--metric", "probe", "--format", "json",
                           profile], capture_output=True, text=True, timeout=60)
    if view.returncode != 0:
        print("cilkprof view failed:", view.stderr)
        return 1
    found = []
    walk(json.loads(view.stdout), [], found)

    failures = []
    total = sum(p for _, p in found)
    if total != total_expected:
        failures.append(f"{total} probes recorded, {total_expected} calls made")
    compiled = {shape: re.compile(shape + r"\Z") for shape in shapes}
    seen = {}
    for path, count in found:
        text = render(path)
        matched = [shape for shape, rx in compiled.items() if rx.match(text)]
        if len(matched) != 1:
            failures.append(f"{'unexpected' if not matched else 'ambiguous'} path ({count:g} probes):\n    " +
                            text.replace("\n", "\n    "))
        else:
            seen[matched[0]] = seen.get(matched[0], 0) + count
    for shape, want in shapes.items():
        got = seen.get(shape, 0)
        if got != want:
            failures.append(f"{got:g} probes (expected {want}) on:\n    " + shape.replace("\n", "\n    "))
    if failures:
        print(f"case {args.case}, --unwind {args.unwind}: {len(failures)} failure(s)")
        for f in failures[:40]:
            print("  " + f)
        return 1
    print(f"case {args.case}, --unwind {args.unwind}: {total:g} probes, all on their expected paths")
    return 0
