"""The RX path map names, for each stage, the model code that stands for it:
every class and method it names must exist in the module it names."""

import importlib
import re
from pathlib import Path

import pytest

MAP = Path(__file__).resolve().parents[1] / "book" / "rx-path-map.md"


def model_references():
    refs = []
    for line in MAP.read_text().splitlines():
        if not line.startswith("**Model:**"):
            continue
        for part in line.removeprefix("**Model:**").split(";"):
            module = re.search(r"in `vsockmodel/(sim/\w+)\.py`", part)
            assert module, f"no module named in: {part!r}"
            names = re.findall(r"`(\w+)\.(\w+)`", part)
            assert names, f"no Class.method in: {part!r}"
            refs += [(module[1].replace("/", "."), cls, meth) for cls, meth in names]
    return refs


def test_every_stage_names_its_model_code():
    assert MAP.read_text().count("**Model:**") == MAP.read_text().count("**Source:**") == 9


@pytest.mark.parametrize("module,cls,meth", model_references())
def test_the_named_method_exists(module, cls, meth):
    obj = getattr(importlib.import_module(f"vsockmodel.{module}"), cls)
    assert callable(getattr(obj, meth))
