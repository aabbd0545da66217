"""The book's single matplotlib style.

Every figure in the book (chapters and explorers) goes through this module, so
colours, fonts and background are set in one place:

* ``use_book_style()`` applies the style (idempotent; call it at the top of a
  chapter, :mod:`vsockmodel.widgets` calls it for you).
* ``COLORS`` / ``CYCLE`` give the Okabe-Ito colour-blind-safe palette.
* ``label(ax, x=..., y=...)`` sets axis labels and refuses a label without a
  unit in parentheses, e.g. ``"payload (bytes)"``.
* ``fmt_size(65536) == "64 KiB"`` formats byte counts for ticks and sliders.

Figures keep an opaque white background so they stay readable when the book is
read in the theme's dark mode (a transparent PNG would put black text on a dark
page).
"""

from __future__ import annotations

import io
import re
from typing import Optional

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
    "show",
]

#: Okabe & Ito (2008) colour-blind-safe palette.
COLORS = {
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "bluish_green": "#009E73",
    "orange": "#E69F00",
    "reddish_purple": "#CC79A7",
    "sky_blue": "#56B4E9",
    "yellow": "#F0E442",
    "black": "#000000",
}

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


def show(fig, scale: int = 2) -> None:
    """Display a finished figure in a notebook as a PNG drawn at ``scale`` times
    the book's resolution and shown at its usual size, so that it stays sharp on
    high-density screens and when a reader zooms in on a phone."""
    import matplotlib.pyplot as plt
    from IPython.display import Image, display

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=fig.dpi * scale, bbox_inches="tight")
    plt.close(fig)
    png = buf.getvalue()
    width = int.from_bytes(png[16:20], "big")          # the PNG header's IHDR width
    display(Image(png, width=round(width / scale)))
