"""The README's examples are run, and print what the README says they print
(issue 36, defect 16): its Python in doctest form, its console lines through
the command line's main(). `scripts/refresh-readme` rewrites the shown outputs
when the model's numbers change (tests/readme_examples.py says how)."""

from __future__ import annotations

import re

import pytest

import readme_examples as rx

TEXT = rx.README.read_text(encoding="utf-8")
BLOCKS = rx.blocks(TEXT)
COMMANDS = [c for b in BLOCKS if b.kind == "console" for c in rx.commands(b)]


def test_every_code_block_is_an_example_or_says_why_not():
    # A fenced block in another language is not run: only the setup commands
    # (```sh, they build the book) and the layout (no language) may be one.
    fences = re.findall(r"^```(\S*)$", TEXT, re.MULTILINE)
    languages = fences[0::2]
    assert set(languages) <= {"python", "console", "sh", ""}, languages
    assert languages.count("python") >= 1 and languages.count("console") >= 1
    assert len(COMMANDS) >= 8


@pytest.mark.parametrize("index", range(sum(b.kind == "python" for b in BLOCKS)))
def test_python_examples_print_what_the_readme_says(index):
    block = [b for b in BLOCKS if b.kind == "python"][index]
    failures, _ = rx.run_python(block)
    assert not failures, "\n".join(failures) + "\n(scripts/refresh-readme rewrites the outputs)"


@pytest.mark.parametrize("cmd", COMMANDS, ids=[" ".join(c.argv)[:60] for c in COMMANDS])
def test_console_examples_run_and_print_what_the_readme_says(cmd):
    assert rx.check_console(cmd) is None, rx.check_console(cmd)


def test_only_the_long_examples_are_parsed_instead_of_run():
    parsed = {" ".join(c.argv) for c in COMMANDS if c.parse_only}
    assert parsed == {"quiz --chapter 3 --key 1-30", "calibrate", "validate", "bench"}


def _bump_first_number(line: str) -> str:
    """The line with its first digit changed: a stale number."""
    m = re.search(r"\d", line)
    return line[:m.start()] + str((int(m.group()) + 1) % 10) + line[m.end():]


def test_a_changed_number_is_noticed_and_refreshed(tmp_path):
    # The check compares numbers exactly, and the refresh puts the fresh ones back.
    cmd = next(c for c in COMMANDS if c.argv[0] == "compare")
    last = next(i for i in reversed(range(len(cmd.want))) if re.search(r"\d", cmd.want[i]))
    stale = list(cmd.want)
    stale[last] = _bump_first_number(stale[last])
    _, out, _ = rx.run_cli(cmd.argv)
    assert rx.matches(cmd.want, out) and not rx.matches(stale, out)
    assert rx.refreshed(stale, out) == [w.rstrip() for w in cmd.want]
    block = next(b for b in BLOCKS if b.kind == "python")
    shown = next(line for line in block.lines if line.startswith("("))      # a tuple of numbers
    readme = tmp_path / "README.md"
    readme.write_text(TEXT.replace(shown, _bump_first_number(shown), 1), encoding="utf-8")
    assert rx.refresh(readme) and readme.read_text(encoding="utf-8") == TEXT


def test_the_readme_says_how_to_run_the_notebooks():
    # issue 36, defect 22
    assert "`.venv/bin/jupyter lab`" in TEXT
