"""Headless Chromium for the flame graph tests: the document after its scripts ran
(--dump-dom), screenshots, and a PNG decoder (zlib and struct only) to tell a picture
from a blank page."""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

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


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def read_png(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA PNG, not interlaced."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise AssertionError(path + " is not a PNG file")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, color_type, _, _, interlace = header
    if depth != 8 or color_type not in (2, 6) or interlace != 0:
        raise AssertionError("%s: unsupported PNG (depth %d, colour type %d, interlace %d)" %
                             (path, depth, color_type, interlace))
    channels = 3 if color_type == 2 else 4
    stride = width * channels
    raw = zlib.decompress(idat)
    rows, previous = [], bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            up_left = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(left, up, up_left)) & 0xFF
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        previous = line
    return width, height, rows


def colour_census(path):
    """(distinct colours, the share of pixels that are not the most common colour)."""
    width, height, rows = read_png(path)
    counts = {}
    for row in rows:
        for pixel in row:
            counts[pixel] = counts.get(pixel, 0) + 1
    return len(counts), 1 - max(counts.values()) / float(width * height)
