"""QR codes of the room's links, as inline SVG, made offline by segno.

segno (pure Python, BSD-3-Clause) travels in the workshop bundle beside the
server (``server/segno/``), so the codes are made on the instructor's
machine when the room page is asked for: only then is the room's address
known. Without segno the room page shows the links alone.
"""

from __future__ import annotations

import functools
import re
from typing import Optional


@functools.lru_cache(maxsize=256)
def svg(url: str, title: str = "") -> Optional[str]:
    """An inline <svg> of ``url``'s QR code (dark on white: scanners need the contrast,
    in dark mode too), or None when segno is missing."""
    try:
        import segno
    except ImportError:
        return None
    code = segno.make(url, error="m", micro=False)
    out = code.svg_inline(scale=4, border=2, dark="#000", light="#fff", omitsize=True,
                          title=title or url, svgclass="room-qr", lineclass=None)
    # segno writes <svg ...>: give it a role and a name for screen readers.
    return re.sub(r"^<svg ", f'<svg role="img" aria-label="QR code: {_escape(title or url)}" ', out, count=1)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
