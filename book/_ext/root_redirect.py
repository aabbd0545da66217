"""The site's front door: ``index.html`` sends a reader to the first page.

sphinx-external-toc writes a one-line ``<meta http-equiv="Refresh">`` there
when the file is missing (no doctype, title or language, and nothing to
follow where refresh is off). This writes a whole page first, with the same
redirect and a link; sphinx-external-toc then leaves it alone.
"""

import html
from pathlib import Path

PAGE = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Refresh" content="0; url={url}">
<title>{title}</title>
</head>
<body>
<p><a href="{url}">{title}</a></p>
</body>
</html>
"""


def _write_front_door(app, exception):
    if exception is not None or app.builder.format != "html" or app.config.root_doc == "index":
        return
    url = app.builder.get_target_uri(app.config.root_doc)
    page = PAGE.format(lang=html.escape(app.config.language or "en"), url=html.escape(url, quote=True),
                       title=html.escape(app.config.project))
    Path(app.outdir, "index.html").write_text(page, encoding="utf-8")


def setup(app):
    # Before sphinx-external-toc's own handler (priority 500), which skips an
    # index.html that exists.
    app.connect("build-finished", _write_front_door, priority=400)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
