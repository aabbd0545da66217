"""Serve the built book to a room: ``python3 serve.py`` in the workshop bundle.

This file is the bundle's ``serve.py``; the server itself is the package
``roomserver`` (beside it, in the repository; in ``server/`` in the bundle),
written with the standard library only, so it runs from the unpacked bundle
on any machine with Python 3.8 or newer and nothing installed. Compared with
``python3 -m http.server`` it gives a room:

- the lab's files with the types browsers insist on, gzip-compressed once
  (at bundle time), with validators and caching headers, so a browser that
  has a file already gets a 304 and no body;
- the room page (the address, each attendee's seed, a "lab ready?" check,
  the agenda's presets as short links and QR codes), the room's tally of
  answers and the instructor's pages;
- by default it listens on this machine only; ``--room`` serves the room's
  network.

The book's tests serve the built book with the same handler (tests/book_support.py).
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
try:                                   # in the repository: vsockmodel.bookkit.serve
    from .roomserver import cli
    from .roomserver.app import handler_for
    from .roomserver.files import COMPRESSED, TYPES
except ImportError:                    # in the bundle: python3 serve.py
    sys.path.insert(0, os.path.join(HERE, "server"))
    from roomserver import cli
    from roomserver.app import handler_for
    from roomserver.files import COMPRESSED, TYPES

__all__ = ["COMPRESSED", "TYPES", "handler_for", "main"]


def main(argv=None) -> int:
    return cli.main(argv, here=HERE)


if __name__ == "__main__":
    raise SystemExit(main())
