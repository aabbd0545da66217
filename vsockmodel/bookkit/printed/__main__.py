"""``python -m vsockmodel.bookkit.printed SITE OUT [--toc _toc.yml] [--paper a4|letter]``."""

import argparse
import sys
from pathlib import Path

from .edition import PAPERS, build

REPO = Path(__file__).resolve().parents[3]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vsockmodel.bookkit.printed",
                                 description="Print the built book to one PDF, in table-of-contents order.")
    ap.add_argument("site", type=Path, help="the built book (_build/html)")
    ap.add_argument("out", type=Path, help="the folder to write the PDF into (_build/pdf)")
    ap.add_argument("--toc", type=Path, default=REPO / "_toc.yml", help="the table of contents (default: %(default)s)")
    ap.add_argument("--paper", choices=list(PAPERS), default="a4", help="paper size (default: a4)")
    args = ap.parse_args(argv)
    try:
        build(args.site, args.toc, args.out, args.paper)
    except (FileNotFoundError, RuntimeError, ValueError) as exc:
        print(f"{ap.prog}: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
