"""Every model method the prose names exists.

The book names the model's methods so that a reader can find them:
`` `Kworker.virtio_transport_recv_pkt()` ``, or, inside the same
parentheses, a bare `` `virtio_transport_recv_pkt_locked()` `` of the class
just named. A rename in the model (the simulator's methods follow the
kernel's function names, which change) must show up here, not in a
reader's failed search. Checked in every page's prose: the notebooks'
markdown cells and the book's Markdown pages.
"""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
import re
from pathlib import Path

import pytest

import vsockmodel
import vsockmodel.sim

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([*ROOT.glob("chapters/*.ipynb"), *ROOT.glob("book/**/*.ipynb"), *ROOT.glob("book/**/*.md")])
_QUALIFIED = re.compile(r"`([A-Z][A-Za-z]+)\.([a-z_][a-z0-9_]*)(?:\(\))?`")
_BARE = re.compile(r"`([a-z_][a-z0-9_]*)\(\)`")
_PARENS = re.compile(r"\(([^()]*)\)")


def model_classes(package=vsockmodel.sim) -> dict[str, type]:
    """The classes of a package's modules (vsockmodel.sim's by default), by name."""
    out = {}
    for info in pkgutil.iter_modules(package.__path__):
        if info.ispkg or info.name == "__main__":
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__.startswith("vsockmodel."):
                out[name] = cls
    return out


def all_class_names() -> set[str]:
    """Every class name of vsockmodel's layers: a ``Class.method`` in the prose
    whose class is none of these names a class the package no longer has."""
    import vsockmodel.bookkit
    import vsockmodel.model
    import vsockmodel.scenarios
    import vsockmodel.study
    return set().union(*(model_classes(pkg) for pkg in (vsockmodel.sim, vsockmodel.model, vsockmodel.study,
                                                         vsockmodel.scenarios, vsockmodel.bookkit)))


def prose(path: Path) -> str:
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text(encoding="utf-8"))
        return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    return path.read_text(encoding="utf-8")


def _prose_parentheses(text: str) -> list[str]:
    """The innermost parenthesised groups of the prose; parentheses inside code
    spans (`f()`) are text, not groups."""
    spans: list[str] = []

    def hide(m: re.Match) -> str:
        spans.append(m.group(0))
        return f"\0{len(spans) - 1}\0"

    masked = re.sub(r"`[^`]*`", hide, text.replace("\n", " "))
    return [re.sub(r"\0(\d+)\0", lambda m: spans[int(m.group(1))], group) for group in _PARENS.findall(masked)]


def missing_names(text: str, classes: dict[str, type], known: set[str] | None = None) -> list[str]:
    """``Class.method`` names of model classes that do not exist, and bare
    ``method()`` names that share parentheses with one and are neither a method
    of that class nor a public name of vsockmodel. With ``known`` (every class
    name of the package), also a ``Class.method`` whose CamelCase class is none
    of them, such as a class the simulator no longer has (file names such as
    ``NOTICE.md`` are all capitals)."""
    bad = [f"{c}.{m}" for c, m in _QUALIFIED.findall(text) if c in classes and not hasattr(classes[c], m)]
    if known is not None:
        bad += [f"{c}.{m}" for c, m in _QUALIFIED.findall(text)
                if c not in known and c not in classes and not c.isupper()]
    for group in _prose_parentheses(text):
        named = [classes[c] for c, _ in _QUALIFIED.findall(group) if c in classes]
        if named:
            bad += [f"{name}()" for name in _BARE.findall(group)
                    if not any(hasattr(cls, name) for cls in named) and not hasattr(vsockmodel, name)]
    return bad


def test_the_check_catches_a_wrong_name():
    classes = model_classes()
    assert missing_names("(`Kworker.recv_pkt()` charges the lookup, then `recv_pkt_locked()`)", classes) == [
        "Kworker.recv_pkt", "recv_pkt_locked()"]
    assert missing_names("(`Kworker.virtio_transport_recv_pkt_find_socket()`, then "
                         "`virtio_transport_recv_pkt_locked()`; `default_costs()`)", classes) == []
    assert missing_names("`Params.make()` and `send()`", {"Params": object}) == ["Params.make"]
    # a class the simulator no longer has (the RX worker before the rebuild), not a file name
    assert missing_names("(`RxWorker.signal`, `Kworker.virtio_transport_rx_work`; `NOTICE.md`)", classes,
                         all_class_names()) == ["RxWorker.signal"]


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_model_method_the_prose_names_exists(path):
    assert missing_names(prose(path), model_classes(), all_class_names()) == []
