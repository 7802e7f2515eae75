"""Headless Chromium for the flame graph tests: the document after its scripts ran
(--dump-dom), screenshots, and a PNG decoder (zlib and struct only) to tell a picture
from a blank page."""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from png_decode import read_png  # noqa: E402

SKIP = 77  # ctest's SKIP_RETURN_CODE for these tests


def find_chromium():
    """The browser, or exit SKIP saying how to get it."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    print("SKIP: no chromium on PATH; install Debian's 'chromium' (scripts/install-deps.sh) to render the flame graph")
    sys.exit(SKIP)


class Browser:
    def __init__(self):
        self.path = find_chromium()
        self.profile_dir = tempfile.mkdtemp(prefix="cilkprof-chromium-")

    def close(self):
        shutil.rmtree(self.profile_dir, ignore_errors=True)

    def _run(self, args, url):
        # --no-sandbox: the tests may run as root, where Chromium's sandbox refuses to start.
        command = [self.path, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                   "--user-data-dir=" + self.profile_dir] + args + [url]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if result.returncode != 0:
            raise AssertionError("chromium failed (%d): %s\n%s" % (result.returncode, " ".join(command),
                                                                      result.stderr[-2000:]))
        return result.stdout

    def dump_dom(self, path, fragment=""):
        """The SVG document after its load handlers ran, as XML text."""
        return self._run(["--dump-dom"], "file://" + os.path.abspath(path) + fragment)

    def screenshot(self, path, png, width=1200, height=800, fragment=""):
        self._run(["--screenshot=" + os.path.abspath(png), "--window-size=%d,%d" % (width, height)],
                  "file://" + os.path.abspath(path) + fragment)
        if not os.path.exists(png):
            raise AssertionError("chromium wrote no screenshot " + png)


def colour_census(path):
    """(distinct colours, the share of pixels that are not the most common colour)."""
    width, height, rows = read_png(path)
    counts = {}
    for row in rows:
        for pixel in row:
            counts[pixel] = counts.get(pixel, 0) + 1
    return len(counts), 1 - max(counts.values()) / float(width * height)
