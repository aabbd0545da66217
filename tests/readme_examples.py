"""The README's code examples: found, run, compared, and rewritten from a fresh run.

Two kinds of fenced block are examples:

- ```` ```python ```` blocks in doctest form (``>>>`` lines and the output
  they print), run in one namespace per block by the standard library's
  doctest;
- ```` ```console ```` blocks of ``$ python -m vsockmodel ...`` lines, run
  in-process (``vsockmodel.cli.main``). The lines after a command, up to the
  next ``$``, are its output; a line ``...`` stands for any lines, and the
  others must match the output in order, number for number.

``tests/test_readme.py`` checks every example; ``scripts/refresh-readme``
(``python tests/readme_examples.py --write``) rewrites the shown outputs from
a fresh run, so that a change of the model's numbers is one command.
"""

from __future__ import annotations

import contextlib
import doctest
import io
import re
import shlex
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
PROMPT = "$ python -m vsockmodel "
ELLIPSIS = "..."
# Examples whose run takes tens of seconds or changes the checkout: their
# argument lists are checked by the parser only, and the README shows no
# output for them (so no number of theirs can go stale). The reason is shown
# when one is not run.
PARSE_ONLY = {
    "calibrate": "rewrites vsockmodel/model/data/costs.json; tests/test_calibration_validation.py fits it",
    "validate": "runs every table of the series (about a minute); tests/test_calibration_validation.py",
    "bench": "a speed benchmark, never a test",
    "--key": "an answer key of 30 seeds (tens of seconds); tests/test_quiz.py lists one",
}


@dataclass
class Command:
    argv: list[str]
    want: list[str]          # the output lines the README shows ("..." for any lines)
    line: int                # where the command is in the README (1-based)

    @property
    def parse_only(self) -> str | None:
        """Why this command is only parsed, or None: it is run."""
        for word, why in PARSE_ONLY.items():
            if word in self.argv:
                return why
        return None


@dataclass
class Block:
    kind: str                # "python" or "console"
    start: int               # index of the first line inside the fence
    lines: list[str]


def blocks(text: str) -> list[Block]:
    """The README's ``python`` and ``console`` fenced blocks."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = re.fullmatch(r"```(python|console)\s*", lines[i])
        if m:
            end = lines.index("```", i + 1)
            out.append(Block(m.group(1), i + 1, lines[i + 1:end]))
            i = end
        i += 1
    return out


def commands(block: Block) -> list[Command]:
    """The ``$ python -m vsockmodel`` commands of a console block, with their shown output."""
    out: list[Command] = []
    for n, line in enumerate(block.lines):
        if line.startswith("$ "):
            if not line.startswith(PROMPT):
                raise ValueError(f"README.md, line {block.start + n + 1}: a console example that is "
                                 f"not `{PROMPT.strip()}`: {line!r}")
            argv = shlex.split(line[len(PROMPT):], comments=True)
            out.append(Command(argv, [], block.start + n + 1))
        elif out:
            out[-1].want.append(line)
        elif line.strip():
            raise ValueError(f"README.md, line {block.start + n + 1}: output before any command")
    return out


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """``python -m vsockmodel ARGV`` in this process: exit status, stdout, stderr."""
    from vsockmodel import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(list(argv))
    return status, out.getvalue(), err.getvalue()


def matches(want: list[str], got: str) -> bool:
    """The shown lines against the real output: "..." lines match any lines,
    the others must be there, in order, exactly (trailing spaces aside)."""
    if not want:
        return True
    pattern = "".join(r"(?:.*\n)*?" if w.strip() == ELLIPSIS else re.escape(w.rstrip()) + r"[ \t]*\n"
                      for w in want)
    if want[-1].strip() != ELLIPSIS:
        pattern += r"\Z"
    if want[0].strip() != ELLIPSIS:
        pattern = r"\A" + pattern
    return re.search(pattern, got if got.endswith("\n") else got + "\n") is not None


def _shape(line: str) -> str:
    """A line with its numbers taken out: how a shown line finds its fresh one."""
    return re.sub(r"[-+]?\d[\d,.]*", "#", line.rstrip())


def refreshed(want: list[str], got: str) -> list[str]:
    """The shown lines with the numbers of ``got``: each line is replaced by the
    next output line of the same shape (the same words, other numbers)."""
    fresh, out, pos = got.splitlines(), [], 0
    for w in want:
        if w.strip() == ELLIPSIS:
            out.append(w)
            continue
        for i in range(pos, len(fresh)):
            if _shape(fresh[i]) == _shape(w):
                out.append(fresh[i].rstrip())
                pos = i + 1
                break
        else:
            raise ValueError(f"the README shows {w!r}, which the output no longer has a line like")
    return out


def run_python(block: Block, write: bool = False) -> tuple[list[str], list[str]]:
    """Run a doctest block. Returns (failures, the block's lines with fresh outputs)."""
    text = "\n".join(block.lines) + "\n"
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {}, "README.md", str(README), block.start)
    if not test.examples:
        raise ValueError(f"README.md, line {block.start}: a python block without `>>>` examples "
                         "(every example is run: write it in doctest form)")
    failures, fresh = [], []
    globs: dict = {}
    for ex in test.examples:
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(ex.source, "README.md", "single"), globs)     # noqa: S102 - the README's own code
            got = out.getvalue()
        except Exception as exc:                  # an example of an error: as doctest shows one
            got = "Traceback (most recent call last):\n...\n" + traceback.format_exception_only(exc)[-1]
        want = ex.want if ex.exc_msg is None else "Traceback (most recent call last):\n...\n" + ex.exc_msg
        if not doctest.OutputChecker().check_output(want, got, doctest.ELLIPSIS):
            failures.append(f"README.md, line {block.start + ex.lineno + 1}: {ex.source.strip()!r} "
                            f"printed {got!r}, the README says {want!r}")
        fresh.append((ex, got))
    lines = list(block.lines)
    if write:                                     # replace each example's shown output, last first
        for ex, got in reversed(fresh):
            first = ex.lineno + len(ex.source.splitlines())
            count = len(ex.want.splitlines())
            indent = " " * ex.indent
            lines[first:first + count] = [indent + g for g in got.splitlines()]
    return failures, lines


def check_console(cmd: Command) -> str | None:
    """Run one console example; a failure's description, or None."""
    if cmd.parse_only:
        from vsockmodel import cli

        if cmd.want:
            return f"README.md, line {cmd.line}: shows output for a command it does not run"
        try:
            cli.build_parser().parse_args(cmd.argv)
        except SystemExit:
            return f"README.md, line {cmd.line}: `{' '.join(cmd.argv)}` is not a valid command"
        return None
    status, out, err = run_cli(cmd.argv)
    if status != 0:
        return f"README.md, line {cmd.line}: exit status {status}: {err.strip()}"
    if not matches(cmd.want, out):
        return (f"README.md, line {cmd.line}: the output is not what the README shows; "
                f"`scripts/refresh-readme` rewrites it.\nshown:\n" + "\n".join(cmd.want)
                + f"\ngot:\n{out}")
    return None


def refresh(path: Path = README) -> list[str]:
    """Rewrite the README's shown outputs from fresh runs; returns what changed."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    changed = []
    for block in reversed(blocks(text)):          # last first: earlier line numbers stay right
        if block.kind == "python":
            _, new = run_python(block, write=True)
        else:
            new = list(block.lines)
            for cmd in reversed(commands(block)):
                if cmd.parse_only or not cmd.want:
                    continue
                status, out, err = run_cli(cmd.argv)
                if status != 0:
                    raise ValueError(f"README.md, line {cmd.line}: exit status {status}: {err.strip()}")
                at = cmd.line - block.start - 1       # the command's index in the block
                new[at:at + 1 + len(cmd.want)] = [new[at], *refreshed(cmd.want, out)]
        if new != block.lines:
            changed.append(f"README.md, lines {block.start + 1}-{block.start + len(block.lines)}")
        lines[block.start:block.start + len(block.lines)] = new
    path.write_text("\n".join(lines) + ("\n" if text.endswith("\n") else ""), encoding="utf-8")
    return changed


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/readme_examples.py --write   (scripts/refresh-readme)")
    for where in refresh() or ["nothing: the README's examples print what it shows"]:
        print(f"refreshed {where}")
