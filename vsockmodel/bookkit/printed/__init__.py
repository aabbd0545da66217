"""The printed edition: the built book as one PDF, in table-of-contents order.

``python -m vsockmodel.bookkit.printed _build/html _build/pdf`` (run by
``scripts/build-book``) writes ``vsock-rx-book-VERSION.pdf`` (A4;
``--paper letter`` for US Letter, ``vsock-rx-book-VERSION-letter.pdf``):

1. ``toc``: the pages in ``_toc.yml`` order, with their parts and titles
   as the built pages give them;
2. ``chromium``: each built page is printed by Chromium (Debian's, through
   Playwright, as the browser tests drive it) with the book's print
   stylesheet (``_assets/book/print.css``), after ``prepare.js`` has set the
   paper, the running header and footer (title, version, licence, the page
   number counted through the whole book), made wide code and tables fit the
   page, and checked that nothing is still wider than it;
3. ``front``: the title page and the contents list, whose page numbers
   are known once the pages are printed;
4. ``assemble``: pypdf joins them, turns links between pages into links
   inside the PDF, and adds the bookmarks and page labels.

The explorers print their first figure with a line saying what their sliders
vary online (``vsockmodel/bookkit/widgets.py``); the lab prints as its
description.
"""

from .edition import PAPERS, build

__all__ = ["PAPERS", "build"]
