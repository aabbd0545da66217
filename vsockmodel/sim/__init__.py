"""The simulation: one module per actor of the RX path (see model.py for the wiring).

Compiled or not
---------------
When the package is installed (``pip install -e .``, which scripts/setup runs
for scripts/build-book and scripts/run-tests), setup.py compiles the modules
named in ``COMPILED`` with mypyc: C extensions built from these same files,
which run a simulation two to three times as fast and give identical results. Python
imports an extension in preference to its source, so this package chooses,
before any of them is imported, and applies the choice to every module here:

- the extensions, when ``BUILD_RECORD`` (written by setup.py after a
  complete build) names the same compiled modules, lists every extension here
  with its sha256, and lists every source they were compiled from (the
  compiled modules and the vsockmodel modules they import) with a sha256
  that still matches;
- the Python sources otherwise. Quietly when nothing was compiled (no mypyc
  or no C compiler) or when ``VSOCKMODEL_PURE_PYTHON=1`` asks for them
  (profiling, debugging, tests that patch a method: a compiled class cannot be
  patched); with a warning that says how to compile again when a source was
  edited after the build, so that the edit takes effect at once.

``COMPILED_IN_USE`` tells which, and ``NOT_COMPILED_BECAUSE`` why not.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import warnings
from pathlib import Path

# The simulation's hot path, compiled by setup.py. Not errors.py: mypyc
# cannot compile subclasses of built-in exceptions such as RuntimeError.
COMPILED = ("stats", "virtqueue", "engine", "sock", "reader", "guest", "host")
NATIVE = "_native__mypyc"                  # the library with the compiled code; the others load it
BUILD_RECORD = "_build_sources.json"       # written by setup.py after a complete build

_HERE = Path(__file__).parent


def _extension(name: str) -> Path | None:
    """The compiled module ``name`` in this folder, if there is one."""
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = _HERE / f"{name}{suffix}"
        if path.exists():
            return path
    return None


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _stale(record_path: Path) -> str | None:
    """Why the build in this folder cannot be used, or None if it can."""
    try:
        record = json.loads(record_path.read_text())
        listed, extensions, sources = record["compiled"], record["extensions"], record["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"{BUILD_RECORD} is missing or unreadable"
    if listed != list(COMPILED) or record.get("native") != NATIVE:
        return "the list of compiled modules differs from the one last compiled"
    built = {name: _extension(name) for name in (*COMPILED, NATIVE)}
    missing = [name for name, path in built.items() if path is None]
    if missing:
        return f"the compiled {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing"
    foreign = [name for name, path in built.items()
               if path is not None and extensions.get(path.name) != _sha256(path)]
    if foreign:
        return f"the compiled {', '.join(foreign)} did not come from the recorded build"
    package = _HERE.parent
    changed = [name for name, digest in sources.items()
               if not (package / name).is_file() or _sha256(package / name) != digest]
    if changed:
        verb = "differs" if len(changed) == 1 else "differ"
        return f"{', '.join(changed)} {verb} from what the simulator was last compiled from"
    return None


def _not_compiled_because() -> str | None:
    """None to use the extensions; else why the sources run (with a warning
    unless nothing was compiled or the sources were asked for)."""
    if os.environ.get("VSOCKMODEL_PURE_PYTHON", "") not in ("", "0"):
        return "VSOCKMODEL_PURE_PYTHON is set"
    record = _HERE / BUILD_RECORD
    if not record.exists() and all(_extension(name) is None for name in (*COMPILED, NATIVE)):
        return "not compiled"
    why = _stale(record)
    if why is not None:
        # warn_explicit with a pseudo-file: no source line of an import echoed below it
        warnings.warn_explicit(
            f"{why}, so every simulator module runs from its Python source: the code as it is "
            f"now, at less than half the speed. scripts/build-book or scripts/run-tests compiles it "
            f"again, as does `pip install --no-build-isolation --no-deps -e .` in the package's "
            f"environment", UserWarning, "<vsockmodel.sim>", 0)
    return why


class _SourceFinder(importlib.abc.MetaPathFinder):
    """Imports this package's modules from their .py files: every one of them
    when the sources run, and those not in COMPILED always (an extension left
    over from an older build must not mix in)."""

    vsockmodel_sources = True     # marks the finder across re-imports of this package

    def __init__(self, use_extensions: bool):
        self.use_extensions = use_extensions

    def find_spec(self, fullname, path=None, target=None):
        package, _, name = fullname.rpartition(".")
        source = _HERE / f"{name}.py"
        if package == __name__ and source.is_file() and not (self.use_extensions and name in COMPILED):
            return importlib.util.spec_from_file_location(fullname, source)
        return None


NOT_COMPILED_BECAUSE = _not_compiled_because()
COMPILED_IN_USE = NOT_COMPILED_BECAUSE is None

sys.meta_path[:] = [f for f in sys.meta_path if not getattr(f, "vsockmodel_sources", False)]
sys.meta_path.insert(0, _SourceFinder(COMPILED_IN_USE))
