"""The licences of everything the workshop bundle ships, beside the book's own.

``write(site, out)`` writes ``out/`` (the bundle's ``LICENSES/``): one text
per component, named after it, and a README.md table of what each covers,
its version, its licence and where the bundle has it. The texts come from
the files the build copied beside each vendored library
(``_static/vendor/*/LICENSE*``; Pyodide's package has none, so scripts/setup
puts SPDX's MPL-2.0 and Python-2.0 texts there) and from the installed Python
packages' metadata.
"""

from __future__ import annotations

import importlib.metadata
import json
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEXTS = Path(__file__).parent / "licence_texts"


@dataclass(frozen=True)
class Component:
    name: str
    licence: str             # SPDX expression
    where: str               # what of the bundle it is
    npm: str = ""            # its npm package, for the version (package-lock.json)
    pypi: str = ""           # its Python distribution, for the version and the licence text
    text: str = ""           # the licence file, relative to the site, when not the distribution's
    full_text: str = ""      # a licence's full text kept in licence_texts/, where the file above only names it


COMPONENTS = (
    Component("Pyodide", "MPL-2.0", "site/_static/vendor/pyodide/ (the lab's Python runtime)", npm="pyodide",
              text="_static/vendor/pyodide/LICENSE"),
    Component("CPython", "Python-2.0", "inside Pyodide: pyodide.asm.wasm and python_stdlib.zip",
              text="_static/vendor/pyodide/LICENSE.python"),
    Component("Vega", "BSD-3-Clause", "site/_static/vendor/vega/vega.min.js (the lab's figures)", npm="vega",
              text="_static/vendor/vega/LICENSE.vega"),
    Component("Vega-Lite", "BSD-3-Clause", "site/_static/vendor/vega/vega-lite.min.js", npm="vega-lite",
              text="_static/vendor/vega/LICENSE.vega-lite"),
    Component("reveal.js", "MIT", "site/_static/vendor/reveal/ (the slides)", npm="reveal.js",
              text="_static/vendor/reveal/LICENSE"),
    Component("MathJax", "Apache-2.0", "site/_static/vendor/mathjax/ (the pages' formulas)", npm="mathjax",
              text="_static/vendor/mathjax/LICENSE"),
    Component("Font Awesome Free", "CC-BY-4.0 AND OFL-1.1 AND MIT",
              "site/_static/vendor/fontawesome/ (the theme's icons: the icons CC BY 4.0, the fonts "
              "SIL OFL 1.1, the code MIT)", text="_static/vendor/fontawesome/LICENSE.txt",
              full_text="OFL-1.1.txt"),
    Component("CodeMirror", "MIT", "site/_static/vendor/codemirror/ (the lab's Python editor, bundled with "
              "its parser Lezer, MIT, by the same authors)", npm="@codemirror/state",
              text="_static/vendor/codemirror/LICENSE.state"),
    Component("SimPy", "MIT", "site/_static/lab/wheels/ and local/ (the model's one dependency)", pypi="simpy"),
    Component("segno", "BSD-3-Clause", "server/segno/ (the room page's QR codes)", pypi="segno"),
    Component("Sphinx", "BSD-2-Clause", "site/_static/ (the pages' search and base styles)", pypi="sphinx"),
    Component("PyData Sphinx Theme", "BSD-3-Clause", "site/_static/ (the pages' theme, with Bootstrap, MIT)",
              pypi="pydata-sphinx-theme"),
    Component("Sphinx Book Theme", "BSD-3-Clause", "site/_static/ (the pages' theme)",
              pypi="sphinx-book-theme"),
    Component("sphinx-copybutton", "MIT", "site/_static/ (copy buttons, with clipboard.js, MIT)",
              pypi="sphinx-copybutton"),
    Component("sphinx-togglebutton", "MIT", "site/_static/ (folded blocks)", pypi="sphinx-togglebutton"),
    Component("sphinx-design", "MIT", "site/_static/ (tabs and cards)", pypi="sphinx-design"),
    Component("MyST-NB", "BSD-3-Clause", "site/_static/mystnb*.css (notebook cells' styles)", pypi="myst-nb"),
    Component("Pygments", "BSD-2-Clause", "site/_static/pygments.css (code colours)", pypi="pygments"),
)

#: The book's own licence files, copied as they are.
OWN = ("LICENSE", "LICENSE-CONTENT", "NOTICE.md")


def npm_version(package: str) -> str:
    lock = json.loads((REPO / "package-lock.json").read_text(encoding="utf-8"))
    return lock["packages"].get(f"node_modules/{package}", {}).get("version", "")


def distribution_licence(name: str) -> str:
    """The licence file a Python distribution installed with its metadata."""
    dist = importlib.metadata.distribution(name)
    for f in dist.files or ():
        base = Path(str(f)).name.upper()
        if ".dist-info" in str(f) and (base.startswith("LICEN") or base.startswith("COPYING")):
            return f.read_text(encoding="utf-8")
    raise FileNotFoundError(f"{name} {dist.version} installed no licence file")


def _file_name(c: Component) -> str:
    return c.name.replace(" ", "-") + ".txt"


def write(site: Path, out: Path) -> list[Path]:
    """Write every component's licence and the index into ``out``; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    written, rows = [], []
    for c in COMPONENTS:
        if c.text:
            path = site / c.text
            if not path.is_file():
                raise FileNotFoundError(f"licences: {c.name}'s licence is missing at {c.text} (scripts/setup copies it)")
            text = path.read_text(encoding="utf-8")
            if c.full_text:
                text += "\n\n" + (TEXTS / c.full_text).read_text(encoding="utf-8")
        else:
            text = distribution_licence(c.pypi)
        version = (npm_version(c.npm) if c.npm else
                   importlib.metadata.version(c.pypi) if c.pypi else "")
        target = out / _file_name(c)
        target.write_text(text, encoding="utf-8")
        written.append(target)
        rows.append(f"| {c.name} | {version or 'as Pyodide ships it'} | {c.licence} | {c.where} | `{target.name}` |")
    for own in OWN:
        target = out / own
        target.write_text((REPO / own).read_text(encoding="utf-8"), encoding="utf-8")
        written.append(target)
    index = out / "README.md"
    index.write_text(
        "# Licences of what this bundle ships\n\n"
        "The book's text and figures are under CC BY 4.0 (`LICENSE-CONTENT`), its code (the model, "
        "the lab, the server, the slides' code) under the MIT licence (`LICENSE`); `NOTICE.md` says what "
        "the book quotes that is not its own. The rest comes from elsewhere, each under its own licence:\n\n"
        "| component | version | licence | in this bundle | its licence |\n| --- | --- | --- | --- | --- |\n"
        + "\n".join(rows) + "\n", encoding="utf-8")
    written.append(index)
    return written
