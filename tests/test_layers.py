"""The package's layers import in one direction only.

model -> (nothing of ours); sim -> model; scenarios -> model, sim;
study (replications, calibration, problem sets) -> model, sim, scenarios;
bookkit (the notebooks' figures and widgets) and lab (the browser lab) may use
those, and nothing below them imports bookkit or lab. The lab takes only the
palette from the book kit: it runs where matplotlib does not; the book kit
takes only the lab's starting examples, which its "try it in the lab" links name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "vsockmodel"
ALLOWED = {
    "model": {"model"},
    "sim": {"model", "sim"},
    "scenarios": {"model", "sim", "scenarios"},
    "study": {"model", "sim", "scenarios", "study"},
    "bookkit": {"model", "sim", "study", "scenarios", "bookkit", "lab.examples"},
    "lab": {"model", "sim", "study", "lab", "bookkit.palette"},
}


def _imports(path: Path, layer: str) -> set[str]:
    """The vsockmodel modules a file imports, as "layer" or "layer.module"."""
    # The file's package under vsockmodel (bookkit/printed/x.py: bookkit.printed),
    # from which its relative imports count their dots.
    package = list(path.parent.relative_to(PACKAGE).parts) if path.is_relative_to(PACKAGE) else [layer]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if not (node.module or "").startswith("vsockmodel"):
                    continue
                parts = node.module.split(".")[1:]
            else:
                base = package[:len(package) - (node.level - 1)] if node.level - 1 <= len(package) else []
                parts = base + (node.module.split(".") if node.module else [])
            names = [a.name for a in node.names]
            if not parts:                                   # from .. import x
                out.update(names)
            elif len(parts) == 1 and not node.module:       # from . import x
                out.update(f"{parts[0]}.{n}" for n in names)
            else:
                out.add(".".join(parts[:2]))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("vsockmodel."):
                    out.add(".".join(a.name.split(".")[1:3]))
    return out


FILES = [(layer, path) for layer in ALLOWED for path in sorted((PACKAGE / layer).rglob("*.py"))]


@pytest.mark.parametrize("layer,path", FILES, ids=[str(p.relative_to(PACKAGE)) for _, p in FILES])
def test_a_layer_imports_only_what_it_may(layer, path):
    allowed = ALLOWED[layer]
    for name in _imports(path, layer):
        top = name.split(".")[0]
        if top in ("__init__", "__version__"):
            continue
        assert top in allowed or name in allowed, f"{path.relative_to(PACKAGE)} imports {name}"


def test_the_checker_counts_the_dots_of_a_subpackage():
    printed = PACKAGE / "bookkit" / "printed" / "edition.py"
    assert {"__version__", "bookkit.citation", "bookkit.printed"} <= _imports(printed, "bookkit")


def test_the_checker_sees_a_forbidden_import(tmp_path):
    bad = tmp_path / "x.py"
    bad.write_text("from ..bookkit.widgets import explorer\nfrom .engine import Sim\n")
    assert _imports(bad, "sim") == {"bookkit.widgets", "sim.engine"}
