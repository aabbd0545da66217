"""The simulation: one module per actor of the RX path (see model.py for the wiring).

Compiled or not
---------------
When the package is installed (``pip install -e .``, which scripts/setup
runs for scripts/build-book and scripts/run-tests), setup.py compiles the modules named in ``COMPILED`` with mypyc: C
extensions built from these same files. They run a simulation about twice as
fast and give identical results. Python imports an extension in preference to
its source, so this package chooses before any of them is imported:

- the extensions, when every one of them is there and none is older than its
  source;
- the sources otherwise: when nothing was compiled (no mypyc or no C
  compiler), when a source was edited after the build (the edit takes effect
  at once, as with Python's bytecode cache; a warning says how to rebuild), or
  when ``VSOCKMODEL_PURE_PYTHON=1`` asks for them (profiling, debugging, tests
  that patch a method: a compiled class cannot be patched).

``COMPILED_IN_USE`` tells which.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys
import warnings
from pathlib import Path

# The simulation's hot path, compiled by setup.py (errors.py stays Python:
# mypyc cannot compile exception classes).
COMPILED = ("stats", "virtqueue", "engine", "sock", "reader", "guest", "host")

_HERE = Path(__file__).parent


def _extension(name: str) -> Path | None:
    """The compiled module ``name`` beside its source, if there is one."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = _HERE / f"{name}{suffix}"
        if path.exists():
            return path
    return None


def _use_extensions() -> bool:
    if os.environ.get("VSOCKMODEL_PURE_PYTHON", "") not in ("", "0"):
        return False
    built = {name: _extension(name) for name in COMPILED}
    if not any(built.values()):
        return False
    missing = [name for name, path in built.items() if path is None]
    older = [name for name, path in built.items()
             if path is not None and path.stat().st_mtime < (_HERE / f"{name}.py").stat().st_mtime]
    if missing or older:
        why = "; ".join(f"the compiled {', '.join(names)} {what}" for names, what in
                        ((missing, "is missing"), (older, "is older than its source")) if names)
        warnings.warn(
            f"vsockmodel.sim: {why}, so "
            f"every simulator module runs from its Python source (same results, about half "
            f"the speed); scripts/build-book or scripts/run-tests compiles it again, as does "
            f"`pip install --no-build-isolation --no-deps -e .` in the package's environment",
            stacklevel=2)
        return False
    return True


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Imports this package's compiled modules from their .py files instead."""

    vsockmodel_sources = True     # marks the finder across re-imports of this package

    def find_spec(self, fullname, path=None, target=None):
        package, _, name = fullname.rpartition(".")
        if package == __name__ and name in COMPILED:
            return importlib.util.spec_from_file_location(fullname, _HERE / f"{name}.py")
        return None


COMPILED_IN_USE = _use_extensions()

sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "vsockmodel_sources", False)]
if not COMPILED_IN_USE:
    sys.meta_path.insert(0, _SourceFinder())
