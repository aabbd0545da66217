"""The book's single matplotlib style.

Every figure in the book (chapters and explorers) goes through this module, so
colours, fonts and background are set in one place:

* ``use_book_style()`` applies the style (idempotent; call it at the top of a
  chapter, :mod:`vsockmodel.widgets` calls it for you).
* ``COLORS`` / ``CYCLE`` give the Okabe-Ito colour-blind-safe palette.
* ``label(ax, x=..., y=...)`` sets axis labels and refuses a label without a
  unit in parentheses, e.g. ``"payload (bytes)"``.
* ``fmt_size(65536) == "64 KiB"`` formats byte counts for ticks and sliders.
* ``show(fig)`` puts a finished figure in the page as SVG, at 100 CSS px per
  inch; ``figure_svg`` and ``svg_data_uri`` do the same for explorers.
  Both refuse text smaller than ``MIN_TEXT_PT`` (``check_text_size``): the
  book's figure viewer opens a figure at least that large, where 6.5 pt is
  9 CSS px, readable on a phone.

Figures keep an opaque white background so they stay readable when the book is
read in the theme's dark mode (a transparent PNG would put black text on a dark
page).
"""

from __future__ import annotations

import re
from typing import Optional
from urllib.parse import quote

import matplotlib as mpl
from cycler import cycler

__all__ = [
    "COLORS",
    "CYCLE",
    "BOOK_RC",
    "use_book_style",
    "label",
    "fmt_size",
    "size_ticks",
    "MissingUnitError",
    "MIN_TEXT_PT",
    "smallest_text_pt",
    "check_text_size",
    "figure_svg",
    "svg_data_uri",
    "show",
]

from .palette import COLORS   # noqa: E402  (one palette for the figures and the lab)

#: Order in which lines are coloured. Yellow is last: it is weak on white.
CYCLE = [
    COLORS["blue"],
    COLORS["vermillion"],
    COLORS["bluish_green"],
    COLORS["orange"],
    COLORS["reddish_purple"],
    COLORS["sky_blue"],
    COLORS["black"],
    COLORS["yellow"],
]

BOOK_RC = {
    # Opaque light background everywhere: readable in light and dark page themes.
    "figure.facecolor": "white",
    "axes.facecolor": "white",
    "savefig.facecolor": "white",
    "savefig.transparent": False,
    "figure.figsize": (6.4, 3.8),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "figure.constrained_layout.use": True,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "text.color": "#222222",
    "axes.labelcolor": "#222222",
    "axes.edgecolor": "#444444",
    "xtick.color": "#444444",
    "ytick.color": "#444444",
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#dddddd",
    "grid.linewidth": 0.6,
    "lines.linewidth": 2.0,
    "lines.markersize": 5,
    "axes.prop_cycle": cycler(color=CYCLE),
    "image.cmap": "cividis",
}


def use_book_style() -> None:
    """Apply the book's matplotlib style to the global rcParams (idempotent)."""
    mpl.rcParams.update(BOOK_RC)


class MissingUnitError(ValueError):
    """An axis label has no unit in parentheses."""


_UNIT_RE = re.compile(r"\(\s*[^()\s][^()]*\)\s*$")


def _check_unit(text: str, axis: str) -> str:
    if not isinstance(text, str) or not _UNIT_RE.search(text):
        raise MissingUnitError(
            f"{axis}-axis label {text!r} needs a unit in parentheses at the end, "
            "e.g. 'payload (bytes)' or 'recv() calls (count)'"
        )
    return text


def label(
    ax,
    x: Optional[str] = None,
    y: Optional[str] = None,
    *,
    title: Optional[str] = None,
):
    """Set axis labels, insisting on a unit: ``label(ax, x="payload (bytes)")``.

    A label must end with a unit in parentheses: ``"(Gbit/s)"``, ``"(µs)"``.
    Dimensionless quantities say so: ``"(%)"``, ``"(ratio)"``, ``"(count)"``.
    Raises :class:`MissingUnitError` (a ``ValueError``) otherwise.
    Returns ``ax`` so calls can be chained.
    """
    if x is not None:
        ax.set_xlabel(_check_unit(x, "x"))
    if y is not None:
        ax.set_ylabel(_check_unit(y, "y"))
    if title is not None:
        ax.set_title(title)
    return ax


_UNITS = ["B", "KiB", "MiB", "GiB", "TiB"]


def fmt_size(n: float, _pos=None) -> str:
    """Format a byte count with binary prefixes: ``fmt_size(65536) == "64 KiB"``.

    Whole numbers print without decimals (``"4 KiB"``), others with up to one
    (``"1.5 KiB"``, ``"3.6 KiB"``). Also usable as a matplotlib tick formatter
    (the optional second argument is the tick position and is ignored).
    """
    value = float(n)
    sign = "-" if value < 0 else ""
    value = abs(value)
    unit = 0
    while value >= 1024 and unit < len(_UNITS) - 1:
        value /= 1024.0
        unit += 1
    if value == int(value):
        text = f"{int(value)}"
    else:
        text = f"{value:.1f}".rstrip("0").rstrip(".")
    return f"{sign}{text} {_UNITS[unit]}"


def size_ticks(axis, values) -> None:
    """Put ticks at ``values`` on ``axis`` (``ax.xaxis``) labelled with :func:`fmt_size`."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    axis.set_major_locator(FixedLocator(list(values)))
    axis.set_minor_locator(NullLocator())
    axis.set_major_formatter(FuncFormatter(fmt_size))


#: Smallest text a figure may have, in points: at the book's 100 CSS px per
#: inch, 6.5 pt is 9 CSS px, the size a figure opened in the viewer must keep.
MIN_TEXT_PT = 6.5


def smallest_text_pt(fig) -> Optional[float]:
    """Size in points of the smallest visible, non-empty text in ``fig``
    (titles, labels, legends, annotations and, once the figure has been
    drawn, tick labels); None if it has none."""
    from matplotlib.text import Text

    sizes = [
        t.get_fontsize()
        for t in fig.findobj(Text)
        if t.get_visible() and t.get_text().strip()
        and (t.axes is None or t.axes.get_visible())
    ]
    return min(sizes) if sizes else None


def check_text_size(fig, where: str = "figure") -> None:
    """Raise ValueError if ``fig`` has text smaller than :data:`MIN_TEXT_PT`."""
    smallest = smallest_text_pt(fig)
    if smallest is not None and smallest < MIN_TEXT_PT:
        raise ValueError(
            f"{where}: text of {smallest:g} pt is too small to read on a phone; "
            f"use at least {MIN_TEXT_PT:g} pt (9 CSS px at 100 px per inch)"
        )


#: SVG output: text as text (a few KB per figure, where outlines take tens;
#: a reader without DejaVu Sans gets a narrower sans-serif, which fits where
#: DejaVu did) and ids that do not change between builds.
_SVG_RC = {"svg.fonttype": "none", "svg.hashsalt": "vsockmodel", "svg.image_inline": True}
_NUMBER = re.compile(r"-?\d+\.\d{3,}")


def _round(m: re.Match) -> str:
    text = f"{float(m.group()):.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def figure_svg(fig, tight: bool = False) -> str:
    """``fig`` as an SVG document, compacted: no comments, metadata or
    indentation, no ids on groups, coordinates to 0.01 pt, and the font list
    matplotlib repeats on every label said once."""
    import collections
    import io

    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context(_SVG_RC):
        fig.savefig(buf, format="svg", bbox_inches="tight" if tight else None,
                    metadata={"Date": None, "Creator": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]                     # no XML prologue or doctype
    svg = re.sub(r"<!--.*?-->", "", svg, flags=re.S)
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r"\s*\n\s*", " ", svg)
    svg = re.sub(r">\s+<", "><", svg).strip()
    svg = re.sub(r'<g id="[^"]*">', "<g>", svg)       # nothing refers to a group
    svg = _NUMBER.sub(_round, svg)
    families = collections.Counter(re.findall(r"font-family: ([^;\"]*);", svg))
    if families:
        family = families.most_common(1)[0][0]
        svg = svg.replace(f"font-family: {family}; ", "").replace(f"font-family: {family};", "")
        rule = "text{font-family:%s}" % family.replace("'", '"')
        svg = re.sub(r"(<svg[^>]*>)", lambda m: f"{m.group(1)}<style>{rule}</style>", svg, count=1)
    return svg


def svg_data_uri(svg: str) -> str:
    """A ``data:`` URI for an SVG document, for an ``<img src="...">``: only
    what a URL or a double-quoted attribute cannot hold is percent-encoded, so
    the page's gzip still finds the SVG's repetitions."""
    # Quote attributes with ' (no %22 for each): written out again by an XML
    # serialiser, attributes are "-quoted, so every ' is in a value or text and
    # can become a character reference, which XML reads back as '.
    import xml.dom.minidom

    svg = xml.dom.minidom.parseString(svg).documentElement.toxml()
    svg = svg.replace("'", "&#39;").replace('"', "'")
    return "data:image/svg+xml," + quote(svg, safe=" /=:;,.-_()'!*~<>?@+[]{}$")


def show(fig, alt: Optional[str] = None) -> None:
    """Display a finished figure in a notebook as SVG, sized at 100 CSS px per
    inch (its text at the sizes the style sets); it stays sharp on
    high-density screens and when a reader opens it larger.

    ``alt`` is the figure's text for a screen reader: what it shows, with its
    numbers, computed by the cell like the figure. With it the figure is an
    ``<img alt=...>`` (the book and Jupyter show that HTML); without it, the
    alt text must come from the cell's metadata (``mystnb.image.alt``), or the
    built page says the image's file name.
    """
    import html

    import matplotlib.pyplot as plt
    from IPython.display import display

    svg = figure_svg(fig, tight=True)      # drawn first, so tick labels count
    check_text_size(fig)
    plt.close(fig)
    size = re.match(r'<svg[^>]* width="([\d.]+)pt" height="([\d.]+)pt"', svg)
    width, height = (round(float(v) / 72 * 100) for v in size.groups())
    bundle = {"image/svg+xml": svg, "text/plain": f"<figure, {width} x {height} px>"}
    if alt is not None:
        if not alt.strip():
            raise ValueError("alt: the figure's description is empty; say what it shows")
        bundle["text/html"] = (
            f'<img class="book-figure" alt="{html.escape(" ".join(alt.split()), quote=True)}" '
            f'width="{width}" height="{height}" style="max-width:100%;height:auto" '
            f'src="{svg_data_uri(svg)}">')
    display(bundle, metadata={"image/svg+xml": {"width": width}}, raw=True)
