"""Fixtures shared by the test modules."""

from __future__ import annotations

import importlib
import sys

import pytest


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
