"""The simulator compiled with mypyc (setup.py) and from its Python sources
(vsockmodel/sim/__init__.py chooses): the same model, the same results."""

from __future__ import annotations

import importlib.machinery
import importlib.util
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
EXTENSION = importlib.machinery.EXTENSION_SUFFIXES[0]

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
    assert sim.COMPILED_IN_USE, (f"vsockmodel/sim runs from source: {sim.NOT_COMPILED_BECAUSE} "
                                 f"(scripts/setup compiles it; its log is .venv/compile.log)")


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


WHICH = ("import sys, vsockmodel, vsockmodel.sim as s\n"
         "mods = [m for n, m in sys.modules.items() if n.startswith('vsockmodel.sim.')]\n"
         "print(s.COMPILED_IN_USE, all(m.__file__.endswith('.py') for m in mods), len(mods))")


def _copy_package(tmp_path: Path, *ignore: str) -> Path:
    copy = tmp_path / "vsockmodel"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", *ignore))
    return copy


@pytest.mark.parametrize("change,why", [
    ("edit sim/reader.py", "sim/reader.py differs from what the simulator was last compiled from"),
    ("edit kernel.py", "kernel.py differs from what the simulator was last compiled from"),  # imported
    ("lose host", "the compiled host is missing"),
    ("lose _native__mypyc", "the compiled _native__mypyc is missing"),
    ("lose record", "_build_sources.json is missing or unreadable"),
    ("swap reader", "the compiled reader did not come from the recorded build"),
    ("unlist host", "the list of compiled modules differs from the one last compiled"),
])
def test_a_build_that_does_not_match_its_sources_is_not_used(tmp_path, change, why):
    # Python prefers an extension module to its source; the package must not let
    # a stale or partial build hide an edit, nor mix compiled and source modules.
    if not sim.COMPILED_IN_USE:
        pytest.skip("the simulator is not compiled here")
    copy = _copy_package(tmp_path)
    what, _, name = change.partition(" ")
    if what == "edit":
        with open(copy / name, "a") as f:
            f.write("\n# an edit\n")
    elif name == "record":
        (copy / "sim" / sim.BUILD_RECORD).unlink()
    elif what == "swap":          # an extension built elsewhere (another build, another Python)
        (copy / "sim" / f"{name}{EXTENSION}").write_bytes((copy / "sim" / f"guest{EXTENSION}").read_bytes())
    elif what == "unlist":        # a module taken out of COMPILED, its old extension still there
        init = copy / "sim" / "__init__.py"
        init.write_text(init.read_text().replace(f', "{name}")', ")"))
    else:
        (copy / "sim" / f"{name}{EXTENSION}").unlink()
    out = _python(WHICH, pythonpath=tmp_path)
    assert out.returncode == 0, out.stderr
    compiled, all_sources, count = out.stdout.split()
    assert (compiled, all_sources) == ("False", "True") and int(count) >= len(sim.COMPILED)
    assert why in out.stderr and "scripts/build-book" in out.stderr


def test_a_build_that_matches_its_sources_is_used(tmp_path):
    if not sim.COMPILED_IN_USE:
        pytest.skip("the simulator is not compiled here")
    copy = _copy_package(tmp_path)
    # A touched file, an edit outside what the simulator imports, and a stray
    # extension beside a module that is not compiled change nothing.
    os.utime(copy / "sim" / "guest.py")
    with open(copy / "widgets.py", "a") as f:
        f.write("\n# an edit\n")
    (copy / "sim" / f"errors{EXTENSION}").write_bytes(b"not a library")
    out = _python(WHICH + "\nimport vsockmodel.sim.errors as e; print(e.__file__)", pythonpath=tmp_path)
    assert out.returncode == 0 and not out.stderr, out.stderr
    compiled, all_sources, _, errors = out.stdout.split()
    assert (compiled, all_sources) == ("True", "False") and errors.endswith("errors.py")


def test_pure_python_is_used_on_request_or_when_nothing_was_compiled(tmp_path):
    out = _python(WHICH, pure=True)
    assert out.stdout.split()[:2] == ["False", "True"] and not out.stderr, out.stderr
    _copy_package(tmp_path, "*.so", "*.pyd", sim.BUILD_RECORD)
    out = _python(WHICH, pythonpath=tmp_path)
    assert out.stdout.split()[:2] == ["False", "True"] and not out.stderr, out.stderr


FAILING_CC = """#!/bin/sh
# A C compiler that cannot compile the library holding the compiled code (or anything, with ALL)
case "$*" in *__native*) exit 1;; esac
[ -n "$ALL" ] && exit 1
exec gcc "$@"
"""


@pytest.mark.parametrize("fails", ["the compiled-code library", "everything"])
def test_a_build_that_fails_in_part_keeps_nothing(tmp_path, fails):
    # setup.py: all or nothing. A library-less set of shims would import as
    # compiled and then fail; a partial build must leave plain Python instead.
    root = PACKAGE.parent
    if not (root / "setup.py").is_file() or importlib.util.find_spec("mypyc") is None:
        pytest.skip("needs the source tree and mypyc")
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(root / name, tmp_path / name)
    _copy_package(tmp_path, "*.so", sim.BUILD_RECORD)
    cc = tmp_path / "cc"
    cc.write_text(FAILING_CC)
    cc.chmod(0o755)
    env = {**os.environ, "CC": str(cc)}
    if fails == "everything":
        env["ALL"] = "1"
    out = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "compiling the simulator failed" in out.stderr
    left = [p.name for p in (tmp_path / "vsockmodel" / "sim").iterdir()
            if p.name.endswith(EXTENSION) or p.name == sim.BUILD_RECORD]
    assert not left


def test_the_run_cache_key_follows_the_code_not_the_build(tmp_path):
    # Cached results are keyed on the package's code and data; a rebuild (a new
    # record) must not throw them away, an edit must.
    copy = _copy_package(tmp_path)
    digest = "import vsockmodel.cache as c; print(c.model_digest())"
    before = _python(digest, pythonpath=tmp_path, pure=True).stdout
    (copy / "sim" / sim.BUILD_RECORD).write_text('{"another": "build"}')
    assert _python(digest, pythonpath=tmp_path, pure=True).stdout == before
    with open(copy / "kernel.py", "a") as f:
        f.write("\n# an edit\n")
    assert _python(digest, pythonpath=tmp_path, pure=True).stdout != before
    assert before.strip()
