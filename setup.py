"""Build hook: compile the simulator with mypyc, when mypyc is installed.

The modules listed below are the simulation's hot path. mypyc (part of mypy)
turns them into C extensions that run the same code about twice as fast, with
identical results. Everything else in the package stays plain Python.

The extensions are optional: without mypyc or a C compiler the package
installs as pure Python and runs unchanged, only slower. In the source tree
(`pip install -e .`) the compiled files sit beside their sources, and
vsockmodel/sim/__init__.py ignores them once a source is newer, so an edit
always takes effect; scripts/setup rebuilds them.
"""

import ast
from pathlib import Path

from setuptools import setup


def compiled_modules() -> list[str]:
    """vsockmodel.sim.COMPILED, read without importing the package."""
    tree = ast.parse(Path("vsockmodel/sim/__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "COMPILED":
            return list(ast.literal_eval(node.value))
    raise RuntimeError("vsockmodel/sim/__init__.py defines no COMPILED")


try:
    from mypyc.build import mypycify
except ImportError:
    ext_modules = []
else:
    ext_modules = mypycify([f"vsockmodel/sim/{name}.py" for name in compiled_modules()],
                           opt_level="3", group_name="vsockmodel.sim._native")
    for ext in ext_modules:
        ext.optional = True       # a failed compile warns and leaves pure Python

setup(ext_modules=ext_modules)
