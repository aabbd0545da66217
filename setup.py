"""Build hook: compile the simulator with mypyc, when mypyc is installed.

The modules named by vsockmodel.sim.COMPILED are the simulation's hot path.
mypyc (part of mypy) turns them into C extensions that run the same code about
two to three times as fast, with identical results. Everything else stays plain Python.

All or nothing: if any extension fails to build (no C compiler, say), none is
kept and the package runs as plain Python, only slower. A complete build also
writes vsockmodel/sim/_build_sources.json beside the extensions: the list of
compiled modules, the sha256 of each extension, and the sha256 of every source
they were compiled from (the compiled modules and every vsockmodel module they
import). vsockmodel/sim/__init__.py runs the Python sources as soon as
anything differs from that record; scripts/setup then compiles again.
"""

import ast
import hashlib
import json
import warnings
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).parent
PACKAGE = ROOT / "vsockmodel"
SIM = PACKAGE / "sim"


def sim_setting(name: str):
    """A constant of vsockmodel/sim/__init__.py, read without importing the package."""
    for node in ast.parse((SIM / "__init__.py").read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == name:
            return ast.literal_eval(node.value)
    raise RuntimeError(f"vsockmodel/sim/__init__.py defines no {name}")


COMPILED = [SIM / f"{name}.py" for name in sim_setting("COMPILED")]
NATIVE = sim_setting("NATIVE")
RECORD = SIM / sim_setting("BUILD_RECORD")


def package_imports(path: Path) -> set[Path]:
    """The vsockmodel modules that one module imports (relative or absolute)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = path.parent
                for _ in range(node.level - 1):
                    base = base.parent
                parts = node.module.split(".") if node.module else []
            elif node.module and node.module.split(".")[0] == "vsockmodel":
                base, parts = ROOT, node.module.split(".")
            else:
                continue
            target = base.joinpath(*parts)
            for alias in node.names:          # a submodule, or a name defined in the module
                module = _module_file(target / alias.name) or _module_file(target)
                if module:
                    found.add(module)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                module = _module_file(ROOT.joinpath(*parts)) if parts[0] == "vsockmodel" else None
                if module:
                    found.add(module)
    return found


def _module_file(path: Path) -> Path | None:
    """The file of module ``path`` (without suffix): path.py or path/__init__.py."""
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def compiled_sources() -> list[Path]:
    """The compiled modules and every vsockmodel module they import, transitively."""
    todo, seen = list(COMPILED), set()
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo.extend(package_imports(path))
    return sorted(seen)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# Hashed before mypyc reads them: an edit made while the build runs then shows
# as a change, instead of being recorded as compiled.
SOURCES = {str(p.relative_to(PACKAGE)): sha256(p) for p in compiled_sources()}


class AllOrNothingBuildExt(build_ext):
    """build_ext that keeps the extensions only if every one of them was built,
    and then records what they were built from (see sim/__init__.py)."""

    def run(self):
        self.built = set()
        folders = [Path(self.build_lib) / "vsockmodel" / "sim"]   # what a wheel packs
        if self.inplace:                                        # also pip install -e .
            folders.append(SIM)
        files = [Path(self.get_ext_filename(ext.name)).name for ext in self.extensions]
        for folder in folders:
            (folder / RECORD.name).unlink(missing_ok=True)
        super().run()
        complete = self.built == {ext.name for ext in self.extensions}
        for folder in folders:
            if complete and folder.is_dir():
                record = {"compiled": sim_setting("COMPILED"), "native": NATIVE,
                          "extensions": {f: sha256(folder / f) for f in files},
                          "sources": SOURCES}
                (folder / RECORD.name).write_text(json.dumps(record, indent=1) + "\n")
            elif not complete:
                for f in files:
                    (folder / f).unlink(missing_ok=True)
        if not complete:
            warnings.warn("vsockmodel: compiling the simulator failed (see above); "
                          "it runs from its Python sources, at less than half the speed")

    def build_extension(self, ext):
        super().build_extension(ext)    # an optional extension's failure is caught by the caller
        self.built.add(ext.name)


try:
    from mypyc.build import mypycify
except ImportError:
    ext_modules = []
else:
    try:
        ext_modules = mypycify([str(p.relative_to(ROOT)) for p in COMPILED], opt_level="3",
                               group_name=f"vsockmodel.sim.{NATIVE.removesuffix('__mypyc')}")
    except SystemExit:
        # mypyc type-checks first and exits on an error (printed above). The
        # sources still run; tests/test_compiled.py fails in scripts/run-tests.
        warnings.warn("vsockmodel: mypyc's type check of the simulator failed (see above); "
                      "installing it without compiling it")
        ext_modules = []
    for ext in ext_modules:
        ext.optional = True       # a failed compile warns; AllOrNothingBuildExt removes the rest

setup(ext_modules=ext_modules, cmdclass={"build_ext": AllOrNothingBuildExt})
