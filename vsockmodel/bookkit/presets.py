"""The agendas' lab presets, in order: what the room page hands out as short links.

``presets()`` reads ``book/instructor/agendas.md``: every link into the lab
in an agenda's table, with its minutes and block, becomes preset 1, 2, 3...
of that agenda. The workshop bundle writes them to ``room/room.json``;
the room's server answers ``/p/N`` with a redirect to preset N (a problem's
preset with the attendee's own seed).
"""

from __future__ import annotations

import html
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
AGENDAS = REPO / "book" / "instructor" / "agendas.md"
#: The agendas, by the heading words that find them, and the name the room page shows.
NAMES = {"90-minute": "90 minutes", "3-hour": "3 hours"}
_LINK = re.compile(r'<a href="\.\./lab\.html(#[^"]*)">(.*?)</a>')


def _table_rows(section: str) -> list[list[str]]:
    rows = [[c.strip() for c in ln.strip().strip("|").split("|")]
            for ln in section.splitlines() if ln.strip().startswith("|")]
    return rows[2:]


def _plain(cell: str) -> str:
    text = re.sub(r"<[^>]+>", "", cell)
    text = re.sub(r"\{(?:doc|ref)\}`([^`<]*?)\s*(?:<[^>]*>)?`", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return html.unescape(text.replace("**", "").replace("*", "")).strip()


def agenda_rows(text: str | None = None) -> list[dict]:
    """Every row of both agendas: {agenda, minutes, block (the bold row's title), activity, open,
    is_block}, the cells as written in agendas.md."""
    text = AGENDAS.read_text(encoding="utf-8") if text is None else text
    out = []
    for key, name in NAMES.items():
        m = re.search(rf"^## [^\n]*{re.escape(key)}[^\n]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
        if not m:
            raise ValueError(f"agendas.md has no {key} agenda")
        block = ""
        for row in _table_rows(m.group(1)):
            is_block = row[0].startswith("**")
            if is_block:
                block = _plain(row[1])
            out.append({"agenda": name, "minutes": row[0].strip("*"), "block": block, "activity": row[1],
                        "open": row[2] if len(row) > 2 else "", "is_block": is_block})
    return out


def presets(text: str | None = None) -> dict:
    """{agenda name: [{n, minutes, block, title, address, problems}]}, in the agenda's order."""
    text = AGENDAS.read_text(encoding="utf-8") if text is None else text
    out = {}
    for key, name in NAMES.items():
        m = re.search(rf"^## [^\n]*{re.escape(key)}[^\n]*\n(.*?)(?=^## |\Z)", text, re.M | re.S)
        if not m:
            raise ValueError(f"agendas.md has no {key} agenda")
        block, found = "", []
        for row in _table_rows(m.group(1)):
            if row[0].startswith("**"):
                block = _plain(row[1])
            for frag, label in _LINK.findall(" | ".join(row[1:])):
                frag = html.unescape(frag)
                found.append({"n": len(found) + 1, "minutes": row[0].strip("*"), "block": block,
                              "title": _plain(label), "address": "/book/lab.html" + frag,
                              "problems": "mode=problems" in frag})
        out[name] = found
    return out
