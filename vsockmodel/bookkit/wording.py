"""Words for the prose from computed results, so that a sentence stays true when the model's numbers move.

A chapter that says "too fast at 64 B and from 8 KiB to 64 KiB" computes the
payloads first and lets these helpers write them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .style import fmt_size


def and_list(words: Iterable[str], empty: str = "none") -> str:
    """["a"] -> "a"; ["a", "b", "c"] -> "a, b and c"; [] -> ``empty``."""
    words = list(words)
    if not words:
        return empty
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def payload_ranges(selected: Iterable[int], ordered: Sequence[int], empty: str = "at no payload") -> str:
    """The payloads of ``selected`` as runs of neighbours in ``ordered``:
    "at 64 B", "from 256 B to 1 KiB", "at 64 B and from 8 KiB to 64 KiB"."""
    chosen = set(selected)
    unknown = chosen - set(ordered)
    if unknown:
        raise ValueError(f"selected: {sorted(unknown)} not among the payloads {list(ordered)}")
    runs: list[list[int]] = []
    for i, p in enumerate(ordered):
        if p not in chosen:
            continue
        if runs and ordered.index(runs[-1][-1]) == i - 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    parts = [f"at {fmt_size(r[0])}" if len(r) == 1 else f"from {fmt_size(r[0])} to {fmt_size(r[-1])}"
             for r in runs]
    if not parts:
        return empty
    # "at 64 B and at 4 KiB" reads as "at 64 B and 4 KiB"
    out = [parts[0]] + [p[3:] if p.startswith("at ") and parts[i].startswith("at ") else p
                        for i, p in enumerate(parts[1:])]
    return and_list(out)


def markdown_table(rows: Sequence[Sequence[str]], align: str = "") -> str:
    """A Markdown table from a header row and body rows; ``align`` has one letter
    per column, "l" or "r" (left if missing). Pipes inside cells are escaped."""
    if not rows:
        raise ValueError("rows: a table needs at least its header row")
    width = len(rows[0])
    if any(len(r) != width for r in rows):
        raise ValueError(f"rows: every row needs {width} cells, as the header has")
    rule = ["---:" if align[i:i + 1] == "r" else "---" for i in range(width)]

    def line(cells):
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"
    return "\n".join([line(rows[0]), line(rule)] + [line(r) for r in rows[1:]])
