"""The package's version, read from the one place it is written: pyproject.toml.

In a checkout, pyproject.toml sits beside the package and is read directly:
installed metadata can lag behind it (an editable install keeps the version it
was installed with, and building the lab's wheel leaves a
``vsockmodel.egg-info`` in the checkout that shadows it from there). An
installed wheel (the lab's, in Pyodide; the workshop's wheelhouse) has no
pyproject.toml beside it and reads its metadata instead.
"""

from __future__ import annotations

import tomllib
from importlib import metadata
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def read_version(pyproject: Path = PYPROJECT) -> str:
    """pyproject.toml's version in a checkout, else the installed package's."""
    if pyproject.is_file():
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
        if project.get("name") == "vsockmodel":
            version = project.get("version")
            if not isinstance(version, str) or not version:
                raise RuntimeError(f"{pyproject}: [project] has no version")
            return version
    return metadata.version("vsockmodel")
