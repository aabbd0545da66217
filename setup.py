"""Build hook: compile the simulator with mypyc, when mypyc is installed.

The modules named by vsockmodel.sim.COMPILED are the simulation's hot path.
mypyc (part of mypy) turns them into C extensions that run the same code about
twice as fast, with identical results. Everything else stays plain Python.

All or nothing: if any extension fails to build (no C compiler, say), none is
kept and the package runs as plain Python, only slower. A successful build
also writes vsockmodel/sim/_build_sources.json: the sha256 of every source the
extensions were compiled from, the compiled modules and every vsockmodel
module they import. vsockmodel/sim/__init__.py runs the Python sources as soon
as one of them differs, so an edit always takes effect; scripts/setup then
compiles again.
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


def write_record(*folders: Path) -> None:
    sources = {str(p.relative_to(PACKAGE)): hashlib.sha256(p.read_bytes()).hexdigest()
               for p in compiled_sources()}
    for folder in folders:
        (folder / RECORD.name).write_text(json.dumps({"sources": sources}, indent=1) + "\n")


class AllOrNothingBuildExt(build_ext):
    """build_ext that keeps the extensions only if every one of them was built."""

    def run(self):
        self.built = set()
        folders = [Path(self.build_lib) / "vsockmodel" / "sim"]       # what a wheel packs
        if self.inplace or getattr(self, "editable_mode", False):   # pip install -e .
            folders.append(SIM)
        for folder in folders:
            (folder / RECORD.name).unlink(missing_ok=True)
        super().run()
        if self.built == {ext.name for ext in self.extensions}:
            write_record(*(f for f in folders if f.is_dir()))
            return
        for folder in folders:
            for path in folder.glob("*.so"):
                path.unlink()
        warnings.warn("vsockmodel: compiling the simulator failed (see above); "
                      "it runs from its Python sources, about half as fast")

    def build_extension(self, ext):
        super().build_extension(ext)    # an optional extension's failure is caught by the caller
        self.built.add(ext.name)


def forget_build() -> None:
    """Remove the compiled simulator, so that its sources run."""
    for path in SIM.glob("*.so"):
        path.unlink()
    RECORD.unlink(missing_ok=True)


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
                      "installing it without the compiled modules")
        forget_build()
        ext_modules = []
    for ext in ext_modules:
        ext.optional = True       # a failed compile warns; AllOrNothingBuildExt removes the rest

setup(ext_modules=ext_modules, cmdclass={"build_ext": AllOrNothingBuildExt})
