#!/usr/bin/env python3
"""Checks a screenshot of a tokentime HTML report (PNG) and the DOM Chromium built for it.

The PNG is decoded here with the standard library alone (zlib; 8-bit RGB or RGBA, the
filters of the PNG spec). It must not be blank: many distinct colours, a good share of
non-white pixels, and the charts' saturated colours (bars, lines) over a visible area. The
DOM must hold every chart's <svg>, each with its bars or lines and axis labels.

Usage: check_screenshot.py PAGE.png PAGE.dom.html
"""

import re
import struct
import sys
import zlib

CHARTS = [
    "chart-ttft-hist",
    "chart-tpot-inflight",
    "chart-queue-prefill",
    "chart-ttft-time",
    "chart-tpot-time",
]


def decode_png(path):
    """Returns (width, height, rows) with rows a list of bytes, 3 or 4 bytes per pixel."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width = 8, [], None
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind = data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace != 0:
                raise ValueError(f"unsupported PNG: depth {depth}, colour type {colour}")
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, bpp, rows


def check_png(path):
    width, height, bpp, rows = decode_png(path)
    colours, non_white, saturated, total = set(), 0, 0, 0
    for row in rows[::2]:
        for x in range(0, width * bpp, bpp * 2):
            r, g, b = row[x], row[x + 1], row[x + 2]
            total += 1
            colours.add((r, g, b))
            if r + g + b < 735:
                non_white += 1
            if max(r, g, b) - min(r, g, b) > 60:
                saturated += 1
    print(
        f"{path}: {width}x{height}, {len(colours)} colours, "
        f"{100 * non_white / total:.1f}% not white, {100 * saturated / total:.2f}% chart colours"
    )
    errors = []
    if len(colours) < 64:
        errors.append(f"only {len(colours)} colours: blank?")
    if non_white < total * 0.03:
        errors.append("almost all white")
    if saturated < total * 0.01:
        errors.append("hardly any chart colour: no charts drawn?")
    return errors


def check_dom(path):
    dom = open(path, encoding="utf-8").read()
    errors = []
    for chart in CHARTS:
        m = re.search(rf'<svg id="{chart}"[^>]*>(.*?)</svg>', dom, re.S)
        if not m:
            errors.append(f"no <svg id={chart}> in the DOM")
            continue
        body = m.group(1)
        marks = body.count("<rect") + body.count("<polyline") + body.count("<circle")
        if marks < 5 or "<text" not in body:
            errors.append(f"{chart}: {marks} bars or lines, text: {'<text' in body}")
    if "http://" in dom or "https://" in dom:
        errors.append("the DOM holds a URL")
    return errors


def main():
    png, dom = sys.argv[1], sys.argv[2]
    errors = check_png(png) + check_dom(dom)
    for e in errors:
        print(f"{png}: {e}", file=sys.stderr)
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
