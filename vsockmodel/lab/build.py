"""Put the browser lab's files together, at book build time.

``python -m vsockmodel.lab.build OUT --simpy-wheel WHEEL`` writes into OUT
(served as ``_static/lab/``):

- the lab's page code (``static/``: lab.js and the modules it loads, the
  workers lab-worker.js and lab-render.js, lab.css);
- ``wheels/``: this repository's vsockmodel as a pure-Python wheel, built
  from the sources now, and simpy's wheel from PyPI;
- ``lab-data.js``: the parameter schema, what the page shows before Python
  has loaded (slider stops with their texts, metrics, examples:
  ``calls.page_data``), and a precomputed default run and headline (computed
  here with CPython, marked as such on the page).

Pyodide itself and the plotting library come from npm (scripts/setup copies
them to ``_static/vendor/``). Nothing is fetched when the page is read.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .. import __version__
from . import api, calls, headline

STATIC = Path(__file__).parent / "static"
REPO = Path(__file__).resolve().parents[2]


def build_wheel(out: Path) -> Path:
    """vsockmodel's wheel from the repository's sources (pure Python: no build step runs code)."""
    # Fixed timestamps in the zip (SOURCE_DATE_EPOCH): the same sources give the
    # same bytes, so an unchanged model leaves the lab's files, and the book, as built.
    env = {**os.environ, "SOURCE_DATE_EPOCH": "315532800"}     # 1980-01-01, zip's earliest
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                        "--disable-pip-version-check", "--wheel-dir", tmp, str(REPO)], check=True, env=env)
        [wheel] = Path(tmp).glob("vsockmodel-*.whl")
        target = out / wheel.name
        shutil.copyfile(wheel, target)
    return target


def precomputed() -> dict:
    """The default configuration's run, as the worker would return it, and the
    book's headline (model against measurement), so both show before Python loads."""
    config = {"seed": 1}
    run = json.loads(api.run(config))
    run["elapsed_ms"] = None    # this machine's speed: not part of the result (and it keeps the file reproducible)
    return {"config": config, "run": run, "headline": headline.precompute()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m vsockmodel.lab.build", description=__doc__.split("\n")[0])
    parser.add_argument("out", type=Path, help="folder to write (its old contents are replaced)")
    parser.add_argument("--simpy-wheel", type=Path, required=True, help="simpy's wheel, from PyPI")
    a = parser.parse_args(argv)
    if a.out.exists():
        shutil.rmtree(a.out)
    wheels = a.out / "wheels"
    wheels.mkdir(parents=True)
    for f in STATIC.iterdir():
        if f.is_file():
            shutil.copyfile(f, a.out / f.name)
    own = build_wheel(a.out)
    simpy = a.out / a.simpy_wheel.name
    shutil.copyfile(a.simpy_wheel, simpy)
    # Wheels keep their names (Pyodide reads a package from the file name) in a
    # folder named by their contents: a browser never runs a cached wheel of another build.
    folder = wheels / hashlib.sha256(own.read_bytes() + simpy.read_bytes()).hexdigest()[:12]
    folder.mkdir()
    own, simpy = own.rename(folder / own.name), simpy.rename(folder / simpy.name)
    data = {
        "version": __version__,
        "schema": json.loads(api.describe()),
        "page": calls.page_data(),
        "precomputed": precomputed(),
        "wheels": [str(w.relative_to(a.out)) for w in (simpy, own)],
    }
    (a.out / "lab-data.js").write_text(
        "// Written by `python -m vsockmodel.lab.build`: do not edit.\n"
        f"window.VSOCK_LAB_DATA = {json.dumps(data, allow_nan=False)};\n", encoding="utf-8")
    print(f"lab: {own.name}, {simpy.name}, schema of {len(data['schema']['parameters'])} parameters -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
