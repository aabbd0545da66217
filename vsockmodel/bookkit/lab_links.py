"""Links from the book's pages to the browser lab, as a page and as a notebook shows them.

In the built book the lab is a page beside the chapters (``../book/lab.html``).
In JupyterLab it is not: Jupyter serves the notebooks, not the built book, so a
link there goes to the built book served at :data:`SERVED_BOOK`, in a new tab,
and says how to serve it. One display carries both forms, the way an explorer
does (vsockmodel/bookkit/widgets.py): an ipywidgets view for Jupyter and a
``text/html`` form that the book shows (``nb_mime_priority_overrides`` in
_config.yml).

:func:`try_in_lab` is a chapter's "try it in the lab" link: the lab's Python
mode with one of its starting examples (``vsockmodel.lab.examples``) loaded.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

#: Where Jupyter's links send a reader for the lab: the built book, served as
#: the README says (``scripts/build-book`` builds it into ``_build/html``).
SERVED_BOOK = "http://localhost:8000/"
SERVE_COMMAND = "python3 -m http.server --directory _build/html 8000"


def lab_address(settings: Mapping[str, Any], book: str = "../") -> str:
    """The lab's address with these settings in its fragment: relative to a
    chapter's page (``book="../"``), or in the served book."""
    query = urlencode({k: str(v).lower() if isinstance(v, bool) else v for k, v in settings.items()})
    return f"{book}book/lab.html#{query}"


def link_html(settings: Mapping[str, Any], text: str, after: str = "", served: bool = False,
              css_class: str = "vsock-lab-link") -> str:
    """A paragraph with a link that opens the lab with ``settings``: in the book's
    page, or (``served``) in the served book, in a new tab, with how to serve it.
    ``after`` follows the link's text (escaped here)."""
    if not served:
        href = lab_address(settings)
        return (f'<p class="{css_class}"><a href="{html.escape(href, quote=True)}">{html.escape(text)}</a>'
                f'{html.escape(after)}</p>')
    href = lab_address(settings, SERVED_BOOK)
    return (f'<p class="{css_class}"><a href="{html.escape(href, quote=True)}" target="_blank" '
            f'rel="noopener">{html.escape(text)}</a> (a new tab){html.escape(after)}. The lab runs from '
            f'the built book; serve it first: <code>{html.escape(SERVE_COMMAND)}</code></p>')


class LabLink:
    """A link that opens the lab with some settings, as a display (a cell's output)."""

    def __init__(self, settings: Mapping[str, Any], text: str, after: str = "",
                 css_class: str = "vsock-lab-link") -> None:
        if not text.strip():
            raise ValueError("text: a link needs words to click")
        self.settings = dict(settings)
        self.text, self.after, self.css_class = text, after, css_class

    def html(self, served: bool = False) -> str:
        return link_html(self.settings, self.text, self.after, served=served, css_class=self.css_class)

    def _repr_mimebundle_(self, **kwargs):
        """The Jupyter view (a link to the served book) and the book's form."""
        import ipywidgets as W

        bundle = W.HTML(value=self.html(served=True))._repr_mimebundle_(**kwargs) or {}
        bundle["text/html"] = self.html()
        bundle["text/plain"] = f"{self.text}{self.after}: {lab_address(self.settings)}"
        return bundle


def lab_link(settings: Mapping[str, Any], text: str, after: str = "") -> LabLink:
    """The display of a link to the lab with ``settings`` (its address's
    fragment: parameters, ``mode``, ``a`` and ``b`` for a comparison)."""
    return LabLink(settings, text, after)


def try_in_lab(example: str) -> LabLink:
    """A chapter's "try it in the lab" link: the lab's Python mode with one of its
    starting examples (``example``: a key of ``vsockmodel.lab.examples.BY_KEY``,
    such as "batched-rx/the-batch-limit")."""
    from ..lab.examples import BY_KEY

    if example not in BY_KEY:
        raise ValueError(f"example: no such example {example!r}; one of {', '.join(BY_KEY)}")
    return LabLink({"mode": "python", "example": example}, "Try it in the lab",
                   f": {BY_KEY[example].title}, in Python", css_class="vsock-lab-link vsock-try-lab")
