"""The simulator compiled with mypyc (setup.py) and from its Python sources
(vsockmodel/sim/__init__.py chooses): the same model, the same results."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import vsockmodel as vm
from vsockmodel import sim

PACKAGE = Path(vm.__file__).parent

# One of each workload and variant, the trace, a small buffer with resets, the host lock.
CONFIGS = [dict(variant=v, payload=p) for v in vm.VARIANTS for p in (64, 4096, 65536)] + [
    dict(variant="p1-p5", workload="pingpong", payload=256, requests=500),
    dict(variant="baseline", payload=1024, buffer="16K", recv_size="1K", seed=3, trace=True),
    dict(variant="p1-p3", payload=128, buffer="1K", headroom_check=False),
    dict(variant="pre-skb", payload=65536, host_lock=True, vhost_used_batch=True, seed=2),
]

BATTERY = f"""
import json, sys
import vsockmodel as vm
out = []
for cfg in {CONFIGS!r}:
    r = vm.run(**cfg)
    out.append(r.to_dict() | {{"trace": repr(r.trace)}})
json.dump(dict(compiled=vm.sim.COMPILED_IN_USE, results=out), sys.stdout, default=repr)
"""


def _python(code: str, *, pythonpath: Path | None = None, pure: bool = False):
    env = {k: v for k, v in os.environ.items() if k != "VSOCKMODEL_PURE_PYTHON"}
    if pure:
        env["VSOCKMODEL_PURE_PYTHON"] = "1"
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300, cwd=pythonpath or PACKAGE.parent)


def test_the_compiled_simulator_is_in_use_where_required():
    # scripts/run-tests sets VSOCKMODEL_REQUIRE_COMPILED: there, a failed mypyc
    # build must not pass unnoticed as a slow pure-Python run.
    if not os.environ.get("VSOCKMODEL_REQUIRE_COMPILED"):
        pytest.skip("VSOCKMODEL_REQUIRE_COMPILED is not set")
    assert sim.COMPILED_IN_USE, "vsockmodel/sim is not compiled: run `pip install -e .` and read its output"


def test_compiled_and_python_simulators_give_identical_results():
    if not sim.COMPILED_IN_USE:
        pytest.skip("the simulator is not compiled here")
    compiled = _python(BATTERY)
    pure = _python(BATTERY, pure=True)
    assert compiled.returncode == 0 and pure.returncode == 0, compiled.stderr + pure.stderr
    compiled, pure = json.loads(compiled.stdout), json.loads(pure.stdout)
    assert compiled["compiled"] and not pure["compiled"]
    for cfg, a, b in zip(CONFIGS, compiled["results"], pure["results"]):
        assert a == b, cfg


WHICH = ("import vsockmodel.sim as s, vsockmodel.sim.guest as g; "
         "print(s.COMPILED_IN_USE, g.__file__.endswith('.py'))")


@pytest.mark.parametrize("change", [None, "edit reader", "edit engine", "lose host"])
def test_a_source_edited_after_the_build_runs_from_source(tmp_path, change):
    # Python prefers an extension module to its source; the package must not
    # let a stale build hide an edit, nor mix compiled and source modules.
    if not sim.COMPILED_IN_USE:
        pytest.skip("the simulator is not compiled here")
    copy = tmp_path / "vsockmodel"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))   # keeps mtimes
    what, _, name = (change or "").partition(" ")
    if what == "edit":
        newest = max(p.stat().st_mtime for p in (copy / "sim").iterdir())
        os.utime(copy / "sim" / f"{name}.py", (newest + 10, newest + 10))
    elif what == "lose":
        for path in (copy / "sim").glob(f"{name}.*.so"):
            path.unlink()
    out = _python(WHICH, pythonpath=tmp_path)
    assert out.returncode == 0, out.stderr
    if change:
        assert out.stdout.split() == ["False", "True"]
        state = "is older than its source" if what == "edit" else "is missing"
        assert f"the compiled {name} {state}" in out.stderr
        assert "scripts/build-book" in out.stderr
    else:
        assert out.stdout.split() == ["True", "False"] and not out.stderr


def test_pure_python_is_used_on_request_or_when_nothing_was_compiled(tmp_path):
    out = _python(WHICH, pure=True)
    assert out.stdout.split() == ["False", "True"] and not out.stderr
    copy = tmp_path / "vsockmodel"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"))
    out = _python(WHICH, pythonpath=tmp_path)
    assert out.stdout.split() == ["False", "True"] and not out.stderr
