"""A disk cache for expensive model computations that notebooks repeat.

Runs are deterministic, so a result depends only on its arguments and on the
model's code and data. The cache key therefore includes a digest of every
file results depend on (``RESULT_PACKAGES``, and the versions of Python and
simpy): change one line of the model and every cached result is computed
afresh. ``joblib.Memory`` does
the storing.

Location: ``$VSOCKMODEL_CACHE``, else ``$XDG_CACHE_HOME/vsockmodel``, else
``~/.cache/vsockmodel``. Delete the folder to start over.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import platform
from pathlib import Path


def cache_dir() -> Path:
    if os.environ.get("VSOCKMODEL_CACHE"):
        return Path(os.environ["VSOCKMODEL_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "vsockmodel"


def usable_cache_dir() -> Path:
    """``cache_dir()``, created if need be; a ValueError naming the variable that
    chose it when it is not a directory the model can write to (a file, say)."""
    path = cache_dir()
    var = ("VSOCKMODEL_CACHE" if os.environ.get("VSOCKMODEL_CACHE")
           else "XDG_CACHE_HOME" if os.environ.get("XDG_CACHE_HOME") else "HOME")
    fix = "set VSOCKMODEL_CACHE to a directory the model may write its cache in"
    if path.exists() and not path.is_dir():
        raise ValueError(f"{var}: the run cache {str(path)!r} is a file, not a directory; {fix}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"{var}: the run cache {str(path)!r} cannot be made a directory "
                         f"({exc.strerror or exc}); {fix}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"{var}: the run cache {str(path)!r} is not writable; {fix}")
    return path


# What a model result depends on: the model's rules and data, the simulation,
# the scenarios, and the study code that runs and scores them. Not the book
# kit (figures, widgets, style) nor the lab: a styling edit recomputes nothing.
RESULT_PACKAGES = ("model", "sim", "scenarios", "study")


@functools.lru_cache(maxsize=1)
def model_digest() -> str:
    """sha256 over the source and data files results depend on (RESULT_PACKAGES),
    and Python's and simpy's versions."""
    import simpy

    root = Path(__file__).parent.parent
    h = hashlib.sha256(f"{platform.python_version()} simpy {simpy.__version__}".encode())
    files = sorted(p for pkg in RESULT_PACKAGES for p in (root / pkg).rglob("*")
                   if p.suffix in (".py", ".csv", ".json"))
    for path in files:
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def memory():
    """The joblib.Memory that stores cached results."""
    from joblib import Memory

    return Memory(location=usable_cache_dir(), verbose=0)


def _simulate_for_digest(digest: str, params, costs):
    # ``digest`` is only part of the cache key: the model's code and data.
    from ..sim.run import simulate

    return simulate(params, costs)


def cached_simulate(params, costs):
    """``simulate(params, costs)``, remembered on disk for this exact model.

    The book's notebooks run hundreds of configurations; the book's build runs
    them first, and the tests' run of the same notebooks then reads them back
    instead of simulating again. Traced runs are not stored (a trace is large),
    and where joblib is missing (the browser lab) this is plain ``simulate``.
    """
    from ..sim.run import simulate

    if params.trace or not _have_joblib():
        return simulate(params, costs)
    return memory().cache(_simulate_for_digest)(model_digest(), params, costs)


@functools.lru_cache(maxsize=1)
def _have_joblib() -> bool:
    """Asked once: a failed import is searched for again at every call."""
    return importlib.util.find_spec("joblib") is not None


def cached_run(**kwargs):
    """``vsockmodel.run(**kwargs)`` through :func:`cached_simulate`."""
    from ..model.params import make_params

    return cached_simulate(*make_params(**kwargs))
