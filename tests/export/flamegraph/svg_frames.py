"""Reading the frames of a flame graph SVG written by `cilkprof flamegraph` (the layout
cli/src/export/flamegraph_svg.cc documents): one dict per <g class="frame ...">, in
document order, from the file or from Chromium's --dump-dom of it."""
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def parse(text):
    root = ET.fromstring(text)
    area = next(e for e in root.iter(NS + "svg") if e.get("id") == "frames")
    root_y, step = float(area.get("data-root-y")), float(area.get("data-step"))
    frames = []
    for g in area.findall(NS + "g"):
        rect = g.find(NS + "rect")
        title = g.find(NS + "title").text or ""
        text = g.find(NS + "text")
        frames.append({
            "name": title.split("\n")[0],
            "title": title,
            "classes": set((g.get("class") or "").split()),
            "x": float(rect.get("x").rstrip("%")),
            "w": float(rect.get("width").rstrip("%")),
            "depth": int(round((float(rect.get("y")) - root_y) / step)),
            "label": text.text if text is not None and text.text else "",
        })
    return root, area, frames


def by_id(root, element_id):
    return next((e for e in root.iter() if e.get("id") == element_id), None)


def covered_percent(frames, predicate):
    """The share of the width the frames matching `predicate` cover, each point once."""
    spans = sorted((f["x"], f["x"] + f["w"]) for f in frames if predicate(f))
    covered, end = 0.0, -1.0
    for start, stop in spans:
        start = max(start, end)
        if stop > start:
            covered += stop - start
            end = stop
    return covered


def check_geometry(frames):
    """Problems with the layout: every frame inside the frame it stands on (the last
    frame one level nearer the root before it), siblings side by side, the root whole."""
    problems = []
    if not frames or frames[0]["depth"] != 0 or abs(frames[0]["w"] - 100) > 1e-6:
        problems.append("the first frame is not the whole-width root")
    path = []  # per depth: the last frame seen there
    last_child_end = {}
    eps = 1e-5
    for i, f in enumerate(frames):
        d = f["depth"]
        if d > 0:
            if d > len(path):
                problems.append("frame %d (%s) at depth %d has no parent" % (i, f["name"], d))
                continue
            parent = path[d - 1]
            if f["x"] < parent["x"] - eps or f["x"] + f["w"] > parent["x"] + parent["w"] + eps:
                problems.append("frame %d (%s) sticks out of %s" % (i, f["name"], parent["name"]))
            if f["x"] < last_child_end.get(id(parent), parent["x"]) - eps:
                problems.append("frame %d (%s) overlaps its sibling" % (i, f["name"]))
            last_child_end[id(parent)] = f["x"] + f["w"]
        del path[d:]
        path.append(f)
    return problems
