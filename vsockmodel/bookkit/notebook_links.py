"""Links in the notebooks that work in JupyterLab as well as in the book.

A MyST role that points into another page (``{term}`credit```,
``{ref}`[v2 series] <v2-series>```, ``{doc}`06-measuring```) is resolved by
Sphinx when the book is built. JupyterLab's MyST renderer sees one notebook
at a time: it draws such a role as a link to ``#`` and logs "Cross reference
target was not found". A Markdown link to the page's file and section works in
both places: JupyterLab opens the file, and the book's extension
``book/_ext/notebook_links.py`` makes it the reference the role would have
made. So the notebooks use links across pages, and roles only within one.

    python -m vsockmodel.bookkit.notebook_links          # rewrite the notebooks' roles as links
    python -m vsockmodel.bookkit.notebook_links --check  # say what is left to rewrite (exit 1 if any)
"""

from __future__ import annotations

import argparse
import json
import posixpath
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from sphinx.util.nodes import _make_id

ROOT = Path(__file__).resolve().parents[2]
#: The pages whose roles and labels count: the book's sources.
SOURCE_DIRS = ("book", "chapters")
_ROLE = re.compile(r"\{(term|ref|doc)\}`([^`]*)`")
_LABEL = re.compile(r"^\(([A-Za-z0-9_.-]+)\)=\s*$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*$")
_EXPLICIT = re.compile(r"^(.*?)\s*<([^<>]+)>\s*$", re.S)


@dataclass(frozen=True)
class Target:
    path: str          # the source file, relative to the repository ("book/references.md")
    anchor: str        # the id in the built page ("" for the page itself)
    title: str         # the section's or the page's title


def _markdown(path: Path) -> list[str]:
    """A page's Markdown: a .md file whole, a notebook's markdown cells."""
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text(encoding="utf-8"))
        return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"]
    return [path.read_text(encoding="utf-8")]


def _plain(title: str) -> str:
    """A heading as its text: roles and code marks dropped."""
    title = re.sub(r"\{[a-z]+\}`([^`]*)`", lambda m: _EXPLICIT.sub(r"\1", m.group(1)), title)
    return title.replace("`", "").strip()


def _sources(root: Path) -> list[Path]:
    return sorted(p for d in SOURCE_DIRS for p in (root / d).rglob("*")
                  if p.suffix in (".md", ".ipynb") and "_build" not in p.parts and ".ipynb_checkpoints" not in p.parts)


def index(root: Path = ROOT) -> tuple[dict[str, Target], dict[str, Target], dict[str, Target]]:
    """The book's labels, pages (by docname) and glossary terms (lower case)."""
    labels, pages, terms = {}, {}, {}
    for path in _sources(root):
        rel = path.relative_to(root).as_posix()
        docname = rel.rsplit(".", 1)[0]
        lines = "\n".join(_markdown(path)).splitlines()
        title = next((_plain(m.group(2)) for line in lines if (m := _HEADING.match(line)) and len(m.group(1)) == 1), "")
        pages[docname] = Target(rel, "", title)
        for i, line in enumerate(lines):
            m = _LABEL.match(line)
            if m:
                heading = next((_plain(h.group(2)) for later in lines[i + 1:i + 4] if (h := _HEADING.match(later))), "")
                labels[m.group(1)] = Target(rel, m.group(1), heading)
        if rel == "book/glossary.md":
            terms.update({t.lower(): Target(rel, _make_id(f"term-{t}"), t) for t in glossary_terms(lines)})
    return labels, pages, terms


def glossary_terms(lines: list[str]) -> list[str]:
    """The terms of the glossary block: the unindented lines of each entry."""
    text = "\n".join(lines)
    body = text[text.index("```{glossary}") + len("```{glossary}"):]
    body = body[:body.index("\n```")]
    out, in_terms = [], False
    for line in body.splitlines():
        if not line.strip() or re.match(r":[a-z-]+:", line.strip()):
            in_terms = False
        elif not line.startswith((" ", "\t")):
            out.append(line.strip())
            in_terms = True
        else:
            in_terms = False
    return out


def _link(text: str, from_path: str, target: Target) -> str:
    rel = posixpath.relpath(target.path, posixpath.dirname(from_path))
    text = text.replace("[", "\\[").replace("]", "\\]")
    return f"[{text}]({rel}{'#' + target.anchor if target.anchor else ''})"


def _docname(target: str, from_path: str) -> str:
    """A {doc} role's target as a docname: "/chapters/x" from the root, "x" beside the page."""
    if target.startswith("/"):
        return target.lstrip("/")
    return posixpath.normpath(posixpath.join(posixpath.dirname(from_path), target))


def rewrite(text: str, from_path: str, idx) -> tuple[str, list[str]]:
    """``text`` (a markdown cell of ``from_path``) with its cross-page roles as links,
    and the roles it could not resolve."""
    labels, pages, terms = idx
    unresolved = []

    def one(m: re.Match) -> str:
        kind, body = m.group(1), m.group(2)
        explicit = _EXPLICIT.match(body)
        text, target = (explicit.group(1), explicit.group(2)) if explicit else (None, body)
        if kind == "term":
            found = terms.get(target.strip().lower())
            if found is None:
                unresolved.append(m.group(0))
                return m.group(0)
            return _link(text or target, from_path, found)
        if kind == "ref":
            found = labels.get(target.strip())
            if found is None:
                unresolved.append(m.group(0))
                return m.group(0)
            if found.path == from_path:
                return m.group(0)                  # within the notebook: JupyterLab resolves it
            return _link(text or found.title, from_path, found)
        found = pages.get(_docname(target.strip(), from_path))
        if found is None:
            unresolved.append(m.group(0))
            return m.group(0)
        return _link(text or found.title, from_path, found)

    return _ROLE.sub(one, text), unresolved


def notebooks(root: Path = ROOT) -> list[Path]:
    return [p for p in _sources(root) if p.suffix == ".ipynb"]


def run(root: Path = ROOT, write: bool = True) -> dict[str, int]:
    """Rewrite (or, without ``write``, count) each notebook's cross-page roles."""
    idx = index(root)
    changed = {}
    for path in notebooks(root):
        rel = path.relative_to(root).as_posix()
        nb = json.loads(path.read_text(encoding="utf-8"))
        n = 0
        for cell in nb["cells"]:
            if cell["cell_type"] != "markdown":
                continue
            old = "".join(cell["source"])
            new, unresolved = rewrite(old, rel, idx)
            if unresolved:
                raise SystemExit(f"{rel}: no such target: {', '.join(unresolved)}")
            if new != old:
                n += len(_ROLE.findall(old)) - len(_ROLE.findall(new))
                cell["source"] = new.splitlines(keepends=True)
        if n:
            changed[rel] = n
            if write:
                path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return changed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vsockmodel.bookkit.notebook_links",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if a notebook has a role to rewrite")
    args = ap.parse_args(argv)
    changed = run(write=not args.check)
    for rel, n in changed.items():
        print(f"{rel}: {n} role(s) {'to rewrite' if args.check else 'rewritten'} as links")
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
