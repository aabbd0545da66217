"""Explorers: figures with sliders that work with a kernel and without one.

The pattern every chapter uses::

    from vsockmodel.widgets import explorer
    from vsockmodel.style import fmt_size, label

    def draw(fig, payload, buffer):
        ax = fig.subplots()
        ...                                    # call the model, plot
        label(ax, x="payload (bytes)", y="throughput (Gbit/s)")

    explorer(draw, {"payload": [64, 256, 4096], "buffer": [65536, 262144]},
             alt="Throughput against payload with a {buffer} buffer at {payload}",
             labels={"payload": "payload", "buffer": "buffer"},
             formats={"payload": fmt_size, "buffer": fmt_size})

How it works:

* **One grid, drawn once.** When the explorer is displayed it calls ``draw``
  once for every combination of slider values and keeps the figures as SVG
  (sharp at any zoom and on any screen).
* **With a kernel (Jupyter): ipywidgets.** The figures sit in a nested
  ``ipywidgets.Stack`` (one nesting level per control); each slider's
  ``index`` is ``jslink``-ed to the ``selected_index`` of every Stack at its
  level, and a Python observer keeps the kernel's Stacks in step, so a slider
  move only switches figures. After editing the model, restart the kernel and
  re-run the notebook (the grid is drawn again); ``Explorer.redraw()`` draws
  the current cell again in place. ``Explorer.select(**params)`` moves the
  sliders from code, and ``Explorer.last_update_s`` is the duration of the
  last update.
* **No kernel (the static book): the book's own HTML.** The same display
  also carries a ``text/html`` form, :attr:`Explorer.static_html`: native
  ``<input type="range">`` sliders, the first figure as a plain ``<img>``, and
  the grid as JSON. The book shows that form (``nb_mime_priority_overrides``
  in ``_config.yml``) and ``_assets/book/book.js`` switches figures from the
  JSON: a few kilobytes of script instead of the ipywidgets manager, so the
  sliders work as soon as the page is parsed, on a slow phone too.
* **Alt text.** Every image is an ``<img alt="...">``: the alt text is
  ``alt.format(**labels)`` where each placeholder receives the *formatted*
  value label of that control (e.g. ``"4 KiB"``); or ``alt`` is a function
  of the sliders' values that returns the text, so that it can give the
  figure's own numbers.
* **Without JavaScript.** The static form's sliders are ``hidden`` until
  book.js shows them; the initial figure is a plain image, and a
  ``<noscript>`` line says that the sliders need JavaScript and which
  setting the image shows.
* **On paper.** A print-only line under the figure (``hidden`` on screen,
  shown by ``_assets/book/print.css``) says that the figure is interactive
  online, what its sliders vary and which setting is printed.
* **Text size.** The figures are shown at 100 CSS px per inch and open at
  least that large in the book's figure viewer; text smaller than
  :data:`~vsockmodel.bookkit.style.MIN_TEXT_PT` (9 CSS px there) is refused
  when the grid is built.
"""

from __future__ import annotations

import gc
import hashlib
import html
import itertools
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Optional

import ipywidgets as W
from ipywidgets.widgets.widget_string import HTMLStyle
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.figure import Figure

from .lab_links import lab_address, link_html
from .style import check_text_size, figure_svg, svg_data_uri, use_book_style

__all__ = ["Explorer", "explorer", "grid"]

DrawFn = Callable[..., Any]


class Explorer:
    """A matplotlib figure driven by selection sliders; see the module docstring."""

    #: CSS pixels per inch of figure: 6.4 x 3.8 in is shown at 640 x 380 px.
    dpi: int = 100

    def __init__(
        self,
        draw: DrawFn,
        controls: Mapping[str, Sequence[Any]],
        *,
        alt: str | Callable[..., str],
        labels: Optional[Mapping[str, str]] = None,
        formats: Optional[Mapping[str, Callable[[Any], str]]] = None,
        figsize: tuple[float, float] = (6.4, 3.8),
        initial: Optional[Mapping[str, Any]] = None,
        lab: Optional[Mapping[str, Any] | Callable[..., Mapping[str, Any]]] = None,
    ) -> None:
        if not callable(draw):
            raise TypeError("draw must be callable as draw(fig, **params)")
        if not controls:
            raise ValueError("controls must name at least one parameter")
        if not callable(alt) and (not isinstance(alt, str) or not alt.strip()):
            raise ValueError("alt text is required (it is what a screen reader says)")
        use_book_style()
        self._draw = draw
        self.names: list[str] = list(controls)
        self.values: dict[str, list[Any]] = {}
        for name in self.names:
            vals = list(controls[name])
            if not vals:
                raise ValueError(f"control {name!r} has no values")
            self.values[name] = vals
        labels = dict(labels or {})
        formats = dict(formats or {})
        unknown = (set(labels) | set(formats) | set(initial or {})) - set(self.names)
        if unknown:
            raise ValueError(f"labels/formats/initial name unknown controls: {sorted(unknown)}")
        self.alt_template = alt
        self.figsize = _check_figsize(figsize)
        if lab is not None and not (callable(lab) or isinstance(lab, Mapping)):
            raise TypeError("lab must be a dict of the lab's settings or a function of the sliders' values")
        self._lab = lab
        self.value_labels: dict[str, list[str]] = {}
        for name in self.names:
            fmt = formats.get(name, str)
            texts = [str(fmt(v)) for v in self.values[name]]
            if len(set(texts)) != len(texts):
                raise ValueError(f"control {name!r}: value labels are not unique: {texts}")
            self.value_labels[name] = texts
        # Fail early on a bad alt template rather than at display time (a
        # function is called with each figure's values as it is drawn).
        if not callable(alt):
            self.alt_text({n: 0 for n in self.names})

        start = {n: 0 for n in self.names}
        for name, value in (initial or {}).items():
            start[name] = self._index_of(name, value)

        self.sliders: dict[str, W.SelectionSlider] = {}
        # One description width for all sliders, so their tracks line up.
        label_width = f"{max(len(labels.get(n, n)) for n in self.names) + 1}ch"
        for name in self.names:
            slider = W.SelectionSlider(
                options=list(zip(self.value_labels[name], self.values[name])),
                index=start[name],
                description=labels.get(name, name),
                continuous_update=False,
                readout=True,
                # The label's hover text; the default (None) shows as "null".
                tooltip="",
                style={"description_width": label_width},
                layout=W.Layout(width="min(100%, 32rem)"),
            )
            slider.observe(self._on_slider, names="index")
            self.sliders[name] = slider

        self._figure = Figure(figsize=self.figsize, dpi=self.dpi)
        FigureCanvasSVG(self._figure)
        # One layout and one style for every figure and Stack: a page then
        # carries (and its widget manager creates) one model per figure, not three.
        self._leaf_layout = W.Layout()
        self._leaf_style = HTMLStyle()
        self._stack_layout = W.Layout()
        self._leaves: dict[tuple[int, ...], W.HTML] = {}
        #: The precomputed figures' data URIs, by grid cell (the static form's grid).
        self._sources: dict[tuple[int, ...], str] = {}
        self._labels = {n: labels.get(n, n) for n in self.names}
        self._stacks: list[list[W.Stack]] = [[] for _ in self.names]
        self._links: list[W.Widget] = []
        self._root: Optional[W.Stack] = None
        self._suspend = False
        self.widget = W.VBox(
            list(self.sliders.values()),
            layout=W.Layout(width="100%", max_width="48rem"),
        )
        self.widget.add_class("vsock-explorer")
        #: Seconds taken by the last slider/select update.
        self.last_update_s: Optional[float] = None
        #: Seconds taken to precompute the whole grid at display time.
        self.build_s: Optional[float] = None
        #: Number of updates run by the observer / select().
        self.update_count = 0

    # ------------------------------------------------------------------ grid
    @property
    def grid_shape(self) -> tuple[int, ...]:
        return tuple(len(self.values[n]) for n in self.names)

    @property
    def grid_size(self) -> int:
        size = 1
        for n in self.grid_shape:
            size *= n
        return size

    @property
    def built(self) -> bool:
        return self._root is not None

    @property
    def stacks(self) -> list[list[W.Stack]]:
        """Stacks per nesting level (level i is switched by slider i)."""
        return self._stacks

    @property
    def links(self) -> list[W.Widget]:
        """The client-side ``jslink`` objects (slider index -> Stack selected_index)."""
        return self._links

    def _index_of(self, name: str, value: Any) -> int:
        if name not in self.values:
            raise KeyError(f"unknown control {name!r}; controls are {self.names}")
        vals = self.values[name]
        for i, v in enumerate(vals):
            if v == value:
                return i
        for i, text in enumerate(self.value_labels[name]):
            if text == value:
                return i
        raise ValueError(f"{name}={value!r} is not on the grid; choose one of {vals}")

    def _indices(self) -> tuple[int, ...]:
        return tuple(self.sliders[n].index for n in self.names)

    def _params(self, idx: Sequence[int]) -> dict[str, Any]:
        return {n: self.values[n][i] for n, i in zip(self.names, idx)}

    @property
    def params(self) -> dict[str, Any]:
        """The current slider values, by control name."""
        return self._params(self._indices())

    def alt_text(self, idx: Mapping[str, int] | Sequence[int]) -> str:
        if isinstance(idx, Mapping):
            idx = [idx[n] for n in self.names]
        if callable(self.alt_template):
            text = self.alt_template(**self._params(idx))
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"alt function gave no text for {self._params(idx)}")
            return text
        fields = {n: self.value_labels[n][i] for n, i in zip(self.names, idx)}
        try:
            return self.alt_template.format(**fields)
        except (KeyError, IndexError) as exc:
            raise ValueError(
                f"alt template {self.alt_template!r} uses a name that is not a control "
                f"({exc}); controls are {self.names}"
            ) from None

    def _render(self, idx: Sequence[int], check: bool = False) -> str:
        """Run draw for grid cell ``idx``; return the ``<img>`` HTML (and lab link).

        ``check`` refuses text too small to read (done for the precomputed
        grid; a live update shows whatever the model draws).
        """
        fig = self._figure
        fig.clear()
        fig.set_dpi(self.dpi)
        fig.set_size_inches(self.figsize)
        params = self._params(idx)
        self._draw(fig, **params)
        src = svg_data_uri(figure_svg(fig))
        if check:                                   # after drawing: tick labels exist
            check_text_size(fig, where=f"explorer figure at {params}")
        self._sources[tuple(idx)] = src
        # (this is the Jupyter view's figure: its lab link goes to the served book)
        return self._img_html(src, self.alt_text(idx)) + self._lab_link(params, served=True)

    def _img_html(self, src: str, alt: str) -> str:
        width = int(round(self.figsize[0] * self.dpi))
        height = int(round(self.figsize[1] * self.dpi))
        return (
            f'<img class="vsock-explorer-figure" alt="{html.escape(alt, quote=True)}" width="{width}" '
            f'height="{height}" style="max-width:100%;height:auto" src="{src}">'
        )

    def lab_settings(self, params: Mapping[str, Any]) -> Optional[dict[str, Any]]:
        """The browser lab's settings for these slider values, or None (no ``lab``).

        ``lab`` is a dict of fixed settings (the chapter's variant, say), to
        which every slider named like a parameter of ``vsockmodel.run`` adds its
        value; or a function of the slider values that returns the settings.
        """
        if self._lab is None:
            return None
        if callable(self._lab):
            return dict(self._lab(**params))
        from ..model.schema import BY_NAME

        return {**self._lab, **{k: v for k, v in params.items() if k in BY_NAME}}

    def _lab_href(self, params: Mapping[str, Any]) -> Optional[str]:
        """The lab's address with these settings (the pages sit one folder
        deep, so ../book/lab.html is the lab from every one of them)."""
        settings = self.lab_settings(params)
        return None if settings is None else lab_address(settings)

    def _lab_link(self, params: Mapping[str, Any], served: bool = False) -> str:
        """A link that opens the lab with these settings, or "" (no ``lab``).

        The link says which sliders the lab has no setting for (a scenario's
        reader wake-up, say). The book's script only changes the address as
        the sliders move, so a ``lab`` function must name the same settings
        for every figure (a dict always does). ``served``: the Jupyter view's
        link, to the served book in a new tab (vsockmodel.bookkit.lab_links).
        """
        settings = self.lab_settings(params)
        if settings is None:
            return ""
        missing = [self._labels[n] for n in self.names if n not in settings]
        note = f" (it has no {_or_list(missing)} setting)" if missing else ""
        return link_html(settings, "Open these settings in the lab", ", to vary them freely" + note,
                         served=served)

    def _leaf(self, value: str) -> W.HTML:
        return W.HTML(value=value, tooltip="", layout=self._leaf_layout, style=self._leaf_style)

    def _build_level(self, level: int, prefix: tuple[int, ...]) -> W.Widget:
        if level == len(self.names):
            leaf = self._leaf(self._render(prefix, check=True))
            self._leaves[prefix] = leaf
            return leaf
        name = self.names[level]
        children = [
            self._build_level(level + 1, prefix + (i,)) for i in range(len(self.values[name]))
        ]
        stack = W.Stack(children=children, selected_index=self.sliders[name].index,
                        layout=self._stack_layout)
        self._stacks[level].append(stack)
        return stack

    def build(self) -> "Explorer":
        """Precompute every grid cell and wire the sliders (done once, at display)."""
        if self._root is not None:
            return self
        t0 = time.perf_counter()
        self._root = self._build_level(0, ())
        for name, stacks in zip(self.names, self._stacks):
            for stack in stacks:
                self._links.append(W.jslink((self.sliders[name], "index"), (stack, "selected_index")))
        self.widget.children = tuple(self.sliders.values()) + (self._root,)
        # Precomputing leaves many long-lived objects (cached model runs, PNGs):
        # move them out of the collector's way so a later full collection does
        # not stall a slider update by a few hundred milliseconds.
        gc.collect()
        gc.freeze()
        self.build_s = time.perf_counter() - t0
        return self

    # ---------------------------------------------------------------- kernel
    def _on_slider(self, change) -> None:
        if self._suspend or self._root is None:
            return
        self._update()

    def _update(self) -> None:
        t0 = time.perf_counter()
        idx = self._indices()
        for level, i in enumerate(idx):
            for stack in self._stacks[level]:
                if stack.selected_index != i:
                    stack.selected_index = i
        self.update_count += 1
        self.last_update_s = time.perf_counter() - t0

    def redraw(self) -> "Explorer":
        """Draw the current grid cell again, with the code the kernel has now."""
        self.build()
        idx = self._indices()
        self._leaves[idx].value = self._render(idx)
        return self

    def select(self, **params: Any) -> "Explorer":
        """Move the sliders to ``params`` and redraw that cell, as a reader would.

        Values may be given as grid values (``payload=4096``) or as their
        labels (``payload="4 KiB"``). Returns the explorer.
        """
        self.build()
        targets = {name: self._index_of(name, value) for name, value in params.items()}
        self._suspend = True
        try:
            for name, i in targets.items():
                self.sliders[name].index = i
        finally:
            self._suspend = False
        self._update()
        return self

    def leaf(self, **params: Any) -> W.HTML:
        """The HTML widget holding the image for ``params`` (default: current)."""
        self.build()
        idx = list(self._indices())
        for name, value in params.items():
            i = self._index_of(name, value)
            idx[self.names.index(name)] = i
        return self._leaves[tuple(idx)]

    @property
    def image_html(self) -> str:
        """``<img>`` HTML of the figure currently selected."""
        return self.leaf().value

    # --------------------------------------------------------------- display
    @property
    def static_html(self) -> str:
        """The explorer for a page without a kernel (see the module docstring).

        Native range sliders (hidden until the book's script shows them), the
        initial figure as a plain image, and the grid as JSON, in row-major
        order of the controls (the last control varies fastest). book.js
        reads it; nothing here runs without the book's script.
        """
        self.build()
        start = self._indices()
        cells = list(itertools.product(*(range(n) for n in self.grid_shape)))
        grid = {
            "controls": [{"name": n, "label": self._labels[n], "options": self.value_labels[n]}
                         for n in self.names],
            "figures": [{"src": self._sources[c], "alt": self.alt_text(c),
                         "lab": self._lab_href(self._params(c))} for c in cells],
        }
        data = json.dumps(grid, ensure_ascii=False, separators=(",", ":"))
        # Ids unique on a page with several explorers, and the same at every build.
        uid = "vx-" + hashlib.sha1(f"{data}{start}".encode()).hexdigest()[:10]
        sliders = []
        for name, i in zip(self.names, start):
            options = self.value_labels[name]
            sliders.append(
                f'<div class="vsock-slider"><label for="{uid}-{name}">{html.escape(self._labels[name])}</label>'
                # autocomplete=off: a page opened again with the back button
                # starts where the figure does (a restored position came after
                # book.js had drawn the figure for the first one).
                f'<input type="range" id="{uid}-{name}" data-control="{name}" min="0" '
                f'max="{len(options) - 1}" step="1" value="{i}" autocomplete="off" '
                f'aria-valuetext="{html.escape(options[i], quote=True)}">'
                f'<output for="{uid}-{name}" aria-hidden="true">{html.escape(options[i])}</output></div>'
            )
        # "</" never ends the script element early ("<\/" is the same JSON string).
        data = data.replace("</", "<\\/")
        return (
            f'<div class="vsock-explorer vsock-explorer--static" id="{uid}">'
            f'<div class="vsock-explorer__sliders" hidden>{"".join(sliders)}</div>'
            '<noscript><p class="vsock-explorer-nojs">This figure has sliders, which need '
            f"JavaScript; without it, it shows {html.escape(self._setting_text(start))}.</p></noscript>"
            f"{self._img_html(self._sources[start], self.alt_text(start))}"
            f"{self._lab_link(self._params(start))}"
            f'<p class="vsock-explorer-print" hidden>{html.escape(self.print_caption())} '
            f'<span class="vsock-explorer-print__setting">{html.escape(self.printed_setting(start))}</span></p>'
            f'<script type="application/json" class="vsock-explorer-grid">{data}</script></div>'
        )

    def print_caption(self) -> str:
        """The line printed under the figure on paper (print.css shows it; the
        screen never does): it is interactive online, and what its sliders vary."""
        ranges = []
        for name in self.names:
            options = self.value_labels[name]
            span = options[0] if len(options) == 1 else f"{options[0]} to {options[-1]}"
            ranges.append(f"{self._labels[name]} ({span})")
        return f"Interactive online: its sliders vary {_and_list(ranges)}."

    def printed_setting(self, idx: Sequence[int]) -> str:
        """Which setting a print shows (book.js keeps it in step with the sliders)."""
        return f"Printed at {self._setting_text(idx)}."

    def _setting_text(self, idx: Sequence[int]) -> str:
        """The sliders' values at grid cell ``idx`` in words ("payload 4 KiB, buffer 64 KiB")."""
        return ", ".join(f"{self._labels[n]} {self.value_labels[n][i]}" for n, i in zip(self.names, idx))

    def _repr_mimebundle_(self, **kwargs):
        """The ipywidgets view (Jupyter), its static form (the book), short text."""
        self.build()
        bundle = self.widget._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict):
            # Keep the plain-text fallback short (the default repr would list
            # every child widget, images included).
            bundle["text/plain"] = repr(self)
            bundle["text/html"] = self.static_html
        return bundle

    def __repr__(self) -> str:
        dims = " x ".join(f"{n}[{len(self.values[n])}]" for n in self.names)
        return f"Explorer({dims}, {self.grid_size} figures)"


#: The pattern's entry point: ``explorer(draw, controls, alt=..., ...)``.
explorer = Explorer


def grid(explorer_: Explorer):
    """Yield ``(params, html_widget)`` for every precomputed grid cell."""
    explorer_.build()
    for idx in itertools.product(*(range(n) for n in explorer_.grid_shape)):
        yield explorer_._params(idx), explorer_._leaves[idx]


MAX_FIG_INCHES = 20      # 2000 CSS px at the explorer's 100 px per inch, per side


def _check_figsize(figsize) -> tuple[float, float]:
    """(width, height) in inches, each in (0, MAX_FIG_INCHES]: checked here, not
    when the figures are drawn at build time."""
    try:
        width, height = (float(v) for v in figsize)
    except (TypeError, ValueError):
        raise ValueError(f"figsize: expected (width, height) in inches, got {figsize!r}") from None
    if not all(0 < v <= MAX_FIG_INCHES for v in (width, height)):     # False for nan too
        raise ValueError(f"figsize: {figsize!r} is out of range; allowed (0, {MAX_FIG_INCHES}] "
                         f"inches per side")
    return width, height


def _or_list(words: Sequence[str]) -> str:
    """["a"] -> "a"; ["a", "b", "c"] -> "a, b or c"."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _and_list(words: Sequence[str]) -> str:
    """["a"] -> "a"; ["a", "b", "c"] -> "a, b and c"."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


