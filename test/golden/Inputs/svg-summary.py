#!/usr/bin/env python3
"""Summarizes an SVG of `idxmap draw` for FileCheck: parses it as XML (a
malformed document fails here), then prints the title, the notes, the
panels, the number of <rect> elements of each class, and each cell's text
in document order (`cell ROW,COL: LINES`, with --cells)."""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def main():
    path = sys.argv[1]
    cells = "--cells" in sys.argv[2:]
    root = ET.parse(path).getroot()
    assert root.tag == NS + "svg", root.tag
    print("title:", root.find(NS + "title").text)
    for t in root.iter(NS + "text"):
        if t.get("class") in ("note", "panel-title", "legend-title"):
            print(t.get("class") + ":", t.text)
    panels = [g for g in root.iter(NS + "g") if g.get("class") == "panel"]
    print("panels:", len(panels))
    counts = {}
    for r in root.iter(NS + "rect"):
        counts[r.get("class")] = counts.get(r.get("class"), 0) + 1
    for k in sorted(counts):
        print("rects %s: %d" % (k, counts[k]))
    if not cells:
        return
    for g in panels:
        current = None
        for e in g:
            if e.tag == NS + "rect":
                if current:
                    print(current)
                where = e.find(NS + "title").text.split(")")[0] + ")"
                current = "cell %s %s:" % (where, e.get("class"))
            elif e.tag == NS + "text" and e.get("class") == "cell-label":
                current += " " + (e.text or "")
        if current:
            print(current)


if __name__ == "__main__":
    main()
