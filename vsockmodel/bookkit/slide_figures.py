"""The book's figures at a projector's size: no text under 14 px on a 1280x720 slide.

A page's figure is an SVG drawn for the page's column, its text real SVG text
(``style.figure_svg``). On a slide its smallest text is ``font size x scale``,
the scale at which the figure fits its box. A figure whose text comes out too
small gets a slide of its own (a larger box); one still too small is split
between its rows, or its columns, of panels (matplotlib's axes, found by their
clip rectangles), each part a crop of the same SVG (its ``viewBox``) on its own
slide, cut where no text is. The report card's six panels become three
slides of two.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional
from urllib.parse import unquote

from .style import svg_data_uri

MIN_PX = 14.0
#: The box a figure gets under a claim, and on a slide of its own (slide pixels; slides.css).
CLAIM_BOX = (1216, 470)
FULL_BOX = (1216, 640)

_ROOT = re.compile(r"<svg\b[^>]*>")
_CLIP = re.compile(r'<clipPath id="[^"]*"><rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"/>')
_TEXT = re.compile(r"<text\b([^>]*)>([^<]*)</text>")


@dataclass(frozen=True)
class Text:
    x0: float
    x1: float
    y0: float
    y1: float
    size: float


@dataclass
class Figure:
    svg: str
    box: tuple                  # viewBox: x, y, width, height
    texts: list
    panels: list                # (x, y, w, h) of each axes

    @property
    def smallest(self) -> Optional[float]:
        return min((t.size for t in self.texts), default=None)

    def text_px(self, box: tuple, crop: Optional[tuple] = None) -> float:
        """The smallest text, in slide pixels, with the figure (or ``crop`` of it) fitted into ``box``."""
        _, _, w, h = crop or self.box
        scale = min(box[0] / w, box[1] / h)
        sizes = [t.size for t in self.texts if crop is None or _inside(t, crop)]
        return min(sizes, default=self.smallest or 99) * scale


def _attr(attrs: str, name: str) -> Optional[str]:
    m = re.search(rf'\b{name}="([^"]*)"', attrs)
    return m.group(1) if m else None


def _inside(t: Text, crop: tuple) -> bool:
    x, y, w, h = crop
    cx, cy = (t.x0 + t.x1) / 2, (t.y0 + t.y1) / 2
    return x <= cx <= x + w and y <= cy <= y + h


def parse(svg: str) -> Figure:
    root = _ROOT.search(svg).group(0)
    box = tuple(float(v) for v in re.split(r"[ ,]+", _attr(root, "viewBox").strip()))
    texts = []
    for attrs, body in _TEXT.findall(svg):
        style = _attr(attrs, "style") or ""
        m = re.search(r"font-size:\s*([\d.]+)", style)
        size = float(m.group(1)) if m else 10.0
        x, y = float(_attr(attrs, "x") or 0), float(_attr(attrs, "y") or 0)
        moved = re.search(r"translate\(([-\d.]+)[ ,]+([-\d.]+)\)", _attr(attrs, "transform") or "")
        if moved:                          # matplotlib places a title or a legend's text this way
            x, y = x + float(moved.group(1)), y + float(moved.group(2))
        length = 0.6 * size * len(html.unescape(body))
        rotated = re.search(r"rotate\(-?90", attrs or "") is not None
        if rotated:                        # a y-axis label: tall, not wide
            x0, x1, y0, y1 = x - size, x + 0.3 * size, y - length / 2, y + length / 2
        else:
            anchor = re.search(r"text-anchor:\s*(\w+)", style)
            a = anchor.group(1) if anchor else "start"
            x0 = x - (length if a == "end" else length / 2 if a == "middle" else 0)
            x1, y0, y1 = x0 + length, y - size, y + 0.3 * size
        texts.append(Text(x0, x1, y0, y1, size))
    panels = [tuple(float(v) for v in m) for m in _CLIP.findall(svg)]
    return Figure(svg, box, texts, panels)


def _bands(panels: list, axis: int) -> list:
    """Panels grouped by row (axis 1) or column (axis 0): [(start, end)] in order."""
    bands: list = []
    for p in sorted(panels, key=lambda p: p[axis]):
        start, end = p[axis], p[axis] + p[axis + 2]
        if bands and start < bands[-1][1] - 1:      # overlaps the band: same row or column
            bands[-1] = (bands[-1][0], max(bands[-1][1], end))
        else:
            bands.append((start, end))
    return bands


def _cut(fig: Figure, lo: float, hi: float, axis: int) -> float:
    """Where to cut the gap between two bands of panels (``lo``: the first band's end, ``hi``: the
    next one's start). The text in the gap is grouped into blocks (lines that touch: a
    two-line title is one block); a block goes with the band it is nearer to (tick labels and an
    axis label hang below their panel, a title sits on its own), and the cut falls between the
    last block of the first band and the first of the next."""
    spans = sorted((t.y0, t.y1) if axis == 1 else (t.x0, t.x1) for t in fig.texts)
    blocks: list = []
    for a, b in spans:
        if b <= lo or a >= hi:
            continue
        if blocks and a <= blocks[-1][1] + 0.5:
            blocks[-1] = (blocks[-1][0], max(blocks[-1][1], b))
        else:
            blocks.append((a, b))
    upper = [blk for blk in blocks if blk[0] - lo <= hi - blk[1]]
    lower = [blk for blk in blocks if blk not in upper]
    top = max([lo] + [blk[1] for blk in upper])
    bottom = min([hi] + [blk[0] for blk in lower])
    return (top + bottom) / 2 if top <= bottom else (lo + hi) / 2


def _crops(fig: Figure, axis: int, per: int) -> list:
    x, y, w, h = fig.box
    bands = _bands(fig.panels, axis)
    groups = [bands[i:i + per] for i in range(0, len(bands), per)]
    edges = [y if axis == 1 else x]
    for prev, nxt in zip(groups, groups[1:]):
        edges.append(_cut(fig, prev[-1][1], nxt[0][0], axis))
    edges.append(y + h if axis == 1 else x + w)
    if axis == 1:
        return [(x, a, w, b - a) for a, b in zip(edges, edges[1:])]
    return [(a, y, b - a, h) for a, b in zip(edges, edges[1:])]


def plan(fig: Figure, box: tuple = CLAIM_BOX) -> list:
    """How to show ``fig``: [] where it is (its text is large enough), else the crops (viewBoxes)
    to put each on a slide of its own, one crop being the whole figure."""
    if fig.smallest is None or fig.text_px(box) >= MIN_PX:
        return []
    if fig.text_px(FULL_BOX) >= MIN_PX:
        return [fig.box]
    best = None
    for axis in (1, 0):                                # rows first: the report card's grid
        n = len(_bands(fig.panels, axis))
        for per in range(n - 1, 0, -1):
            crops = _crops(fig, axis, per)
            if all(fig.text_px(FULL_BOX, c) >= MIN_PX for c in crops):
                if best is None or len(crops) < len(best):
                    best = crops
                break
    if best is None:                                    # no split between panels helps: even parts,
        for k in (2, 3):                                # cut where no text is, along the side that limits
            x, y, w, h = fig.box
            axis = 1 if FULL_BOX[0] / w > FULL_BOX[1] / h else 0
            crops = _even_crops(fig, axis, k)
            if all(fig.text_px(FULL_BOX, c) >= MIN_PX for c in crops):
                best = crops
                break
    return best or [fig.box]                            # nothing helps: the largest box at least


def _even_crops(fig: Figure, axis: int, k: int) -> list:
    x, y, w, h = fig.box
    start, size = (y, h) if axis == 1 else (x, w)
    edges = [start] + [_cut(fig, start + size * (i / k - 0.12), start + size * (i / k + 0.12), axis)
                       for i in range(1, k)] + [start + size]
    if axis == 1:
        return [(x, a, w, b - a) for a, b in zip(edges, edges[1:])]
    return [(a, y, b - a, h) for a, b in zip(edges, edges[1:])]


def cropped(fig: Figure, crop: tuple) -> str:
    """The figure's SVG showing only ``crop`` (as a data URI for an <img>)."""
    x, y, w, h = crop
    root = _ROOT.search(fig.svg).group(0)
    new = re.sub(r'\bviewBox="[^"]*"', f'viewBox="{x:.2f} {y:.2f} {w:.2f} {h:.2f}"', root)
    new = re.sub(r'\bwidth="[^"]*"', f'width="{w:.2f}pt"', new, count=1)
    new = re.sub(r'\bheight="[^"]*"', f'height="{h:.2f}pt"', new, count=1)
    new = new.replace("<svg ", '<svg overflow="hidden" ', 1)      # nothing of the figure outside the crop
    return svg_data_uri(fig.svg.replace(root, new, 1))


def load(src: str, slides_dir: Path) -> Optional[Figure]:
    """The figure an <img src> of a deck shows, when it is an SVG (inline or a file)."""
    import xml.dom.minidom

    if src.startswith("data:image/svg+xml"):
        text = unquote(src.split(",", 1)[1])
    elif src.endswith(".svg") and (slides_dir / src).resolve().is_file():
        text = (slides_dir / src).resolve().read_text(encoding="utf-8")
    else:
        return None
    # One form whatever the source (style.svg_data_uri quotes attributes with '): XML's, "-quoted.
    return parse(xml.dom.minidom.parseString(text).documentElement.toxml())
