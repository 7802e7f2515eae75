#!/usr/bin/env python3
"""Decodes an 8-bit RGB or RGBA PNG with zlib (no imaging library) and checks that a
rendering of the speedup plot is not blank: mostly white, with enough pixels near the
upper bound's blue (#1f77b4), the lower bound's red (#d62728) and the measured
points' green (#2ca02c).

  png_colors.py FILE.png
"""
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path} is not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        pos += 12 + length
    width, height, depth, color, _, _, interlace = header
    if depth != 8 or color not in (2, 6) or interlace != 0:
        raise ValueError(f"unsupported PNG: depth {depth}, color type {color}, interlace {interlace}")
    channels = 3 if color == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        filter_type = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if filter_type == 1:
                line[i] = (line[i] + a) & 0xFF
            elif filter_type == 2:
                line[i] = (line[i] + b) & 0xFF
            elif filter_type == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif filter_type == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append(line)
        previous = line
    pixels = [tuple(row[x * channels:x * channels + 3]) for row in rows for x in range(width)]
    return width, height, pixels


def near(pixel, color, tolerance=40):
    return all(abs(p - c) <= tolerance for p, c in zip(pixel, color))


def main():
    width, height, pixels = decode(sys.argv[1])
    total = len(pixels)
    counts = {
        "white": sum(1 for p in pixels if near(p, (255, 255, 255), 8)),
        "blue (upper bound)": sum(1 for p in pixels if near(p, (0x1F, 0x77, 0xB4))),
        "red (lower bound)": sum(1 for p in pixels if near(p, (0xD6, 0x27, 0x28))),
        "green (measured)": sum(1 for p in pixels if near(p, (0x2C, 0xA0, 0x2C))),
    }
    print(f"{sys.argv[1]}: {width}x{height}, " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    failures = []
    if counts["white"] < total // 2:
        failures.append("less than half the picture is the white background")
    if counts["white"] == total:
        failures.append("the picture is blank")
    for name in ("blue (upper bound)", "red (lower bound)", "green (measured)"):
        if counts[name] < 30:
            failures.append(f"hardly any {name} pixels: {counts[name]}")
    for failure in failures:
        print("FAILED:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
