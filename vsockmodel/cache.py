"""A disk cache for expensive model computations that notebooks repeat.

Runs are deterministic, so a result depends only on its arguments and on the
model's own code and data. The cache key therefore includes a digest of every
file of this package (and the versions of Python and simpy): change one line
of the model and every cached result is computed afresh. ``joblib.Memory`` does
the storing.

Location: ``$VSOCKMODEL_CACHE``, else ``$XDG_CACHE_HOME/vsockmodel``, else
``~/.cache/vsockmodel``. Delete the folder to start over.
"""

from __future__ import annotations

import functools
import hashlib
import os
import platform
from pathlib import Path


def cache_dir() -> Path:
    if os.environ.get("VSOCKMODEL_CACHE"):
        return Path(os.environ["VSOCKMODEL_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "vsockmodel"


@functools.lru_cache(maxsize=1)
def model_digest() -> str:
    """sha256 over the package's source and data files, Python's and simpy's versions."""
    import simpy

    from .sim import BUILD_RECORD     # the compiled build's record: not model code or data

    root = Path(__file__).parent
    h = hashlib.sha256(f"{platform.python_version()} simpy {simpy.__version__}".encode())
    for path in sorted(p for p in root.rglob("*")
                       if p.suffix in (".py", ".csv", ".json") and p.name != BUILD_RECORD):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def memory():
    """The joblib.Memory that stores cached results."""
    from joblib import Memory

    return Memory(location=cache_dir(), verbose=0)
