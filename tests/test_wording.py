"""The prose's words for computed results (vsockmodel.bookkit.wording)."""

from __future__ import annotations

import pytest

from vsockmodel.bookkit.wording import and_list, markdown_table, payload_ranges

PAYLOADS = [64, 256, 512, 1024, 4096, 8192, 16384, 65536]


def test_and_list_joins_with_commas_and_a_last_and():
    assert and_list(["a"]) == "a"
    assert and_list(["a", "b", "c"]) == "a, b and c"
    assert and_list([], empty="nothing") == "nothing"


@pytest.mark.parametrize("chosen, words", [
    ([64], "at 64 B"),
    ([256, 512, 1024], "from 256 B to 1 KiB"),
    ([64, 8192, 16384, 65536], "at 64 B and from 8 KiB to 64 KiB"),
    ([64, 1024, 65536], "at 64 B, 1 KiB and 64 KiB"),
    ([], "at no payload"),
])
def test_payload_ranges_name_runs_of_neighbouring_payloads(chosen, words):
    assert payload_ranges(chosen, PAYLOADS) == words


def test_a_payload_off_the_list_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^selected: \[100\] not among the payloads"):
        payload_ranges([100], PAYLOADS)


def test_markdown_table_aligns_escapes_and_checks_its_rows():
    text = markdown_table([["name", "value"], ["a|b", "1"]], align="lr")
    assert text.splitlines() == ["| name | value |", "| --- | ---: |", "| a\\|b | 1 |"]
    with pytest.raises(ValueError, match="every row needs 2 cells"):
        markdown_table([["a", "b"], ["only one"]])
    with pytest.raises(ValueError, match="header row"):
        markdown_table([])
