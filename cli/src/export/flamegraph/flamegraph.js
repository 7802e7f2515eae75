// The flame graph's interaction (flamegraph_svg.cc writes the frames; this runs when a
// browser opens the SVG). Embedded into every SVG at build time (embed.cmake).
//
//   click a frame          zoom: it fills the width, the frames it stands on stay
//                          (faded), the others are hidden; "Reset zoom" undoes it
//   Search, Ctrl-F or /    a regular expression (a plain substring if it is not one);
//                          matching frames turn magenta and the share of the total
//                          they cover (each sample counted once) shows bottom right
//   hover                  the frame's name, value and percentage on the bottom line
//                          (the <title> tooltip holds the same and more)
//   #zoom=N&search=RE      in the URL: the N-th frame (0: the root, in document order)
//                          zoomed and RE searched when the file opens; both kept up to
//                          date as the user clicks, so a link shows the same view
"use strict";
(function () {
  var SVG_NS = "http://www.w3.org/2000/svg";
  var CHAR_WIDTH = 0.59 * 12;  // as flamegraph_svg.cc: the 12-pixel font's average advance
  var frames = [];             // {g, rect, text, name, info, x, w, depth, y} with x, w in percent
  var area, areaWidth, details, matched, resetZoom, clearSearch, searchButton;
  var zoomed = -1, searchTerm = "";

  function init() {
    area = document.getElementById("frames");
    details = document.getElementById("details");
    matched = document.getElementById("matched");
    resetZoom = document.getElementById("reset-zoom");
    clearSearch = document.getElementById("clear-search");
    searchButton = document.getElementById("search");
    areaWidth = parseFloat(area.getAttribute("width"));
    var rootY = parseFloat(area.getAttribute("data-root-y"));
    var step = parseFloat(area.getAttribute("data-step"));
    var groups = area.children;
    for (var i = 0; i < groups.length; ++i) {
      var g = groups[i];
      var rect = g.getElementsByTagName("rect")[0];
      var title = g.getElementsByTagName("title")[0].textContent;
      var newline = title.indexOf("\n");
      var y = parseFloat(rect.getAttribute("y"));
      frames.push({
        g: g, rect: rect, text: g.getElementsByTagName("text")[0] || null,
        name: newline < 0 ? title : title.substring(0, newline),
        info: newline < 0 ? "" : title.substring(newline + 1).split("\n")[0],
        x: parseFloat(rect.getAttribute("x")), w: parseFloat(rect.getAttribute("width")),
        depth: Math.round((y - rootY) / step), y: y
      });
      g.cilkprofIndex = i;
    }
    area.addEventListener("click", function (e) {
      var i = frameIndexOf(e.target);
      if (i >= 0) { zoom(i); saveState(); }
    });
    area.addEventListener("mouseover", function (e) {
      var i = frameIndexOf(e.target);
      if (i >= 0) details.textContent = frames[i].name + "  " + frames[i].info;
    });
    area.addEventListener("mouseout", function () { details.textContent = " "; });
    resetZoom.addEventListener("click", function () { unzoom(); saveState(); });
    clearSearch.addEventListener("click", function () { search(""); saveState(); });
    searchButton.addEventListener("click", askSearch);
    window.addEventListener("keydown", function (e) {
      if ((e.ctrlKey && e.key === "f") || e.key === "/") { e.preventDefault(); askSearch(); }
      else if (e.key === "Escape") { search(""); saveState(); }
    });
    loadState();
  }

  function frameIndexOf(node) {
    while (node && node !== area) {
      if (node.cilkprofIndex !== undefined) return node.cilkprofIndex;
      node = node.parentNode;
    }
    return -1;
  }

  // The frame's label for a width in percent of the area: as much of the name as fits.
  function fit(f, widthPercent) {
    var room = Math.floor((areaWidth * widthPercent / 100 - 6) / CHAR_WIDTH);
    var label = room < 3 ? "" : (f.name.length <= room ? f.name : f.name.substring(0, room - 2) + "..");
    if (!f.text) {
      if (label === "") return;
      f.text = document.createElementNS(SVG_NS, "text");
      f.text.setAttribute("dx", "3");
      f.text.setAttribute("y", String(f.y + 11));
      f.g.appendChild(f.text);
    }
    f.text.textContent = label;
  }

  function place(f, x, w) {
    f.rect.setAttribute("x", x + "%");
    f.rect.setAttribute("width", w + "%");
    fit(f, w);
    if (f.text) f.text.setAttribute("x", x + "%");
  }

  function zoom(index) {
    var z = frames[index];
    // Coordinates are percentages written with 6 decimals (flamegraph_svg.cc): a child's
    // x + width may pass its parent's by the rounding of four numbers (2e-6).
    var eps = 1e-5;
    var scale = 100 / z.w;
    for (var i = 0; i < frames.length; ++i) {
      var f = frames[i];
      var g = f.g.classList;
      g.remove("hide", "ancestor");
      if (f.depth < z.depth) {
        // Below the zoomed frame: only the frames it stands on, across the whole width.
        if (f.x <= z.x + eps && f.x + f.w >= z.x + z.w - eps) { g.add("ancestor"); place(f, 0, 100); }
        else g.add("hide");
      } else if (f.x >= z.x - eps && f.x + f.w <= z.x + z.w + eps) {
        place(f, (f.x - z.x) * scale, f.w * scale);
      } else {
        g.add("hide");
      }
    }
    zoomed = index;
    resetZoom.classList.remove("hidden");
    if (searchTerm !== "") search(searchTerm);
  }

  function unzoom() {
    for (var i = 0; i < frames.length; ++i) {
      frames[i].g.classList.remove("hide", "ancestor");
      place(frames[i], frames[i].x, frames[i].w);
    }
    zoomed = -1;
    resetZoom.classList.add("hidden");
  }

  function askSearch() {
    var term = window.prompt("Search for frames (a regular expression):", searchTerm);
    if (term !== null) { search(term); saveState(); }
  }

  function matcher(term) {
    try { return new RegExp(term); } catch (e) {
      return new RegExp(term.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
    }
  }

  // Marks the frames whose name matches and shows the share of the total they cover:
  // the union of their spans, so a recursive function's nested frames count once.
  function search(term) {
    searchTerm = term;
    var spans = [];
    var re = term === "" ? null : matcher(term);
    for (var i = 0; i < frames.length; ++i) {
      var f = frames[i];
      var hit = re !== null && re.test(f.name);
      f.g.classList.toggle("match", hit);
      if (hit) spans.push([f.x, f.x + f.w]);
    }
    if (re === null) {
      matched.textContent = " ";
      clearSearch.classList.add("hidden");
      return;
    }
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var covered = 0, end = -1;
    for (var k = 0; k < spans.length; ++k) {
      var start = Math.max(spans[k][0], end);
      if (spans[k][1] > start) { covered += spans[k][1] - start; end = spans[k][1]; }
    }
    var total = parseFloat(area.getAttribute("data-total"));
    var decimals = parseInt(area.getAttribute("data-decimals"), 10);
    var unit = area.getAttribute("data-unit");
    var value = (total * covered / 100).toFixed(decimals) + (unit ? " " + unit : "");
    matched.textContent = "Matched: " + value + " (" + covered.toFixed(1) + "% of " +
        area.getAttribute("data-metric") + ") in " + spans.length + " frames";
    clearSearch.classList.remove("hidden");
  }

  function loadState() {
    var params = new URLSearchParams(window.location.hash.replace(/^#/, ""));
    var z = parseInt(params.get("zoom"), 10);
    if (z >= 0 && z < frames.length) zoom(z);
    if (params.get("search")) search(params.get("search"));
  }

  function saveState() {
    var params = new URLSearchParams();
    if (zoomed >= 0) params.set("zoom", String(zoomed));
    if (searchTerm !== "") params.set("search", searchTerm);
    var hash = params.toString();
    try { history.replaceState(null, "", hash === "" ? window.location.pathname : "#" + hash); } catch (e) { /* a viewer without history */ }
  }

  if (document.readyState === "loading") window.addEventListener("load", init);
  else init();
})();
