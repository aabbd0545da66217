"""The committed notebooks carry their outputs, run top to bottom.

nbval checks saved outputs only for cells that were run (it silently skips a
cell whose execution_count is empty), so an unexecuted notebook would pass it.
These checks close that gap; scripts/refresh-notebooks satisfies them.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p for p in [*REPO.glob("book/**/*.ipynb"), *REPO.glob("chapters/*.ipynb")]
                   if ".ipynb_checkpoints" not in p.parts)


def test_there_are_notebooks():
    assert any(p.parent.name == "chapters" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(REPO)))
def test_notebook_was_run_top_to_bottom(path):
    nb = nbformat.read(path, as_version=4)
    counts = [c.execution_count for c in nb.cells if c.cell_type == "code" and c.source.strip()]
    assert counts, f"{path.name} has no code cell"
    assert None not in counts, (
        f"{path.name}: cells without saved outputs; run scripts/refresh-notebooks {path.relative_to(REPO)}"
    )
    assert counts == list(range(1, len(counts) + 1)), (
        f"{path.name}: cells were not run once, in order, in a fresh kernel (execution counts {counts}); "
        f"run scripts/refresh-notebooks {path.relative_to(REPO)}"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(REPO)))
def test_notebook_has_no_errors_or_stored_widget_state(path):
    nb = nbformat.read(path, as_version=4)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors, f"{path.name} has saved error outputs"
    assert "widgets" not in nb.metadata, (
        f"{path.name} stores widget state (large); run scripts/refresh-notebooks, which drops it"
    )


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: str(p.relative_to(REPO)))
def test_inline_notebooks_remove_no_cell(path):
    """myst-nb's inline execution runs a cell when it renders it, so a cell
    tagged remove-cell never runs and the {eval} numbers it computes come out
    as NameError warnings. Hide such a cell with remove-input instead."""
    nb = nbformat.read(path, as_version=4)
    if nb.metadata.get("mystnb", {}).get("execution_mode") != "inline":
        pytest.skip("not executed inline")
    removed = [i for i, c in enumerate(nb.cells) if "remove-cell" in c.metadata.get("tags", [])]
    assert not removed, f"{path.name}: cells {removed} are tagged remove-cell; use remove-input"
