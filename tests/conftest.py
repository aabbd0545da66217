"""Fixtures and session set-up shared by the test modules."""

from __future__ import annotations

import importlib
import os
import sys
import warnings

import pytest


def pytest_configure(config):
    # After an edit to the simulator without a new compile, vsockmodel.sim runs
    # its sources and warns once per process. The notebooks' kernels would print
    # that warning into every notebook's output and fail nbval; ask them for the
    # sources instead, quietly (scripts/run-tests compiles first, and there
    # tests/test_compiled.py fails on a stale build).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import vsockmodel.sim as sim
    if sim.NOT_COMPILED_BECAUSE not in (None, "not compiled", "VSOCKMODEL_PURE_PYTHON is set"):
        os.environ["VSOCKMODEL_PURE_PYTHON"] = "1"


def pytest_report_header(config):
    import vsockmodel.sim as sim
    if sim.COMPILED_IN_USE:
        return "vsockmodel.sim: compiled with mypyc"
    return f"vsockmodel.sim: Python sources ({sim.NOT_COMPILED_BECAUSE})"


@pytest.fixture
def pure_vsockmodel(monkeypatch):
    """vsockmodel imported afresh with its simulator running from the Python
    sources (vsockmodel/sim/__init__.py), for a test that patches a simulator
    method or class attribute: a compiled class cannot be patched. Every
    vsockmodel module the test imports is this fresh copy; the modules
    imported before are put back afterwards."""
    saved = {name: mod for name, mod in sys.modules.items() if name.partition(".")[0] == "vsockmodel"}
    monkeypatch.setenv("VSOCKMODEL_PURE_PYTHON", "1")
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))
    for name in saved:
        del sys.modules[name]
    try:
        vm = importlib.import_module("vsockmodel")
        assert not vm.sim.COMPILED_IN_USE
        yield vm
    finally:
        for name in [n for n in sys.modules if n.partition(".")[0] == "vsockmodel"]:
            del sys.modules[name]
        sys.modules.update(saved)
