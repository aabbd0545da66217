"""`jupyter-book build BOOK --warningiserror --keep-going [--all]`, with Sphinx
reading the pages in parallel.

The jupyter-book command runs Sphinx in one process, so the book's notebooks
execute one after another while the other core waits. Its own entry point,
jupyter_book.sphinx.build_sphinx, takes Sphinx's ``jobs``: with it, pages, and
the notebooks run while they are read, are spread over several processes.
Everything else is what the command passes.

Usage: python scripts/build_sphinx.py BOOK_DIR JOBS [--all]
"""

import sys
from pathlib import Path

from jupyter_book.sphinx import build_sphinx


def main(book: str, jobs: str, *flags: str) -> int:
    root = Path(book).resolve()
    result = build_sphinx(
        root, root / "_build" / "html",
        use_external_toc=True, noconfig=True, path_config=root / "_config.yml",
        confoverrides={"external_toc_path": (root / "_toc.yml").as_posix(),
                       "latex_individualpages": False},
        builder="html", warningiserror=True, keep_going=True,
        freshenv="--all" in flags, jobs=int(jobs),
    )
    if isinstance(result, Exception):
        raise result
    return result


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
