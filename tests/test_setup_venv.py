"""scripts/setup notices a .venv made for another folder, and says to recreate it.

A virtual environment copied or moved from another checkout still runs that
checkout's Python (its scripts name it in their first line) and that
checkout's vsockmodel (the editable install). Each case here builds a small
stand-in repository with a bare venv (``python -m venv --without-pip``, no
network) and runs setup's check on it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _repo(root: Path) -> Path:
    """A stand-in checkout: scripts/setup, a vsockmodel package and a bare .venv."""
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "setup", root / "scripts" / "setup")
    (root / "vsockmodel").mkdir()
    (root / "vsockmodel" / "__init__.py").write_text("", encoding="utf-8")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    return root


def _script(venv: Path, interpreter: str) -> None:
    """A console script as pip writes one, naming its interpreter in its first line."""
    tool = venv / "bin" / "tool"
    tool.write_text(f"#!{interpreter}\n# -*- coding: utf-8 -*-\nimport sys\n", encoding="utf-8")
    tool.chmod(0o755)


def _check(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", '. scripts/setup && _check_venv_home'], cwd=root,
                          capture_output=True, text=True)


def test_a_venv_made_here_passes(tmp_path):
    root = _repo(tmp_path / "here")
    _script(root / ".venv", f"{root}/.venv/bin/python")
    result = _check(root)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("how", ["copied", "moved"])
def test_a_venv_whose_scripts_run_another_python_is_refused(tmp_path, how):
    root = _repo(tmp_path / "here")
    if how == "copied":                    # the original is still there
        other = _repo(tmp_path / "there")
        _script(root / ".venv", f"{other}/.venv/bin/python")
    else:                                  # the original folder is gone
        _script(root / ".venv", f"{tmp_path}/gone/.venv/bin/python")
    result = _check(root)
    assert result.returncode != 0
    assert "Recreate .venv" in result.stderr and "bin/tool" in result.stderr, result.stderr


def test_a_venv_whose_vsockmodel_is_another_checkouts_is_refused(tmp_path):
    root = _repo(tmp_path / "here")
    other = tmp_path / "there"
    (other / "vsockmodel").mkdir(parents=True)
    (other / "vsockmodel" / "__init__.py").write_text("", encoding="utf-8")
    site = next((root / ".venv" / "lib").glob("python3*/site-packages"))
    (site / "__editable__.vsockmodel.pth").write_text(f"{other}\n", encoding="utf-8")   # an editable install
    result = _check(root)
    assert result.returncode != 0
    assert "another checkout" in result.stderr and "Recreate .venv" in result.stderr, result.stderr
