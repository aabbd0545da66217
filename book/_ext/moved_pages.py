"""Old addresses keep working after a page or a section moves.

Two settings in ``_config.yml`` (``sphinx.config``):

``moved_pages``
    ``{old docname: {"to": new docname, "anchors": {old id: new id}}}``. The
    build writes a small page at the old address that sends the reader on to
    the new one, keeping the ``#anchor`` (renamed where the map says so),
    with a plain link for a browser without scripts or refresh.
``moved_anchors``
    ``{docname: {old id: "new docname#new id"}}``: sections that left a page
    that still exists. That page gets a few lines of script that follow an
    address naming such an anchor to the section's new place.

Links inside the book are written to the new places; these only catch
bookmarks and links from outside.
"""

import html
import json
import posixpath
from pathlib import Path

STUB = """<!DOCTYPE html>
<html lang="{lang}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="vsock-moved-to" content="{url}">
<script>{script}</script>
<meta http-equiv="Refresh" content="0; url={url}">
<title>Moved: {title}</title>
</head>
<body>
<p>This page has moved: <a href="{url}">{title}</a>.</p>
</body>
</html>
"""

# Follow the address's #anchor to its new name on the new page (or keep it).
STUB_SCRIPT = ("(function(){{var m={anchors},h=decodeURIComponent(location.hash.slice(1)),"
               "a=m[h]||h;location.replace({url}+(a?\"#\"+encodeURIComponent(a):\"\"));}})();")
# On a page that lost sections: follow an anchor that moved, before the page draws.
PAGE_SCRIPT = ("(function(){{var m={moved},h=decodeURIComponent(location.hash.slice(1));"
               "if(m[h])location.replace(m[h]);}})();")


def _relative(app, from_doc, target):
    """The address of ``target`` ("doc" or "doc#id") as a link from ``from_doc``'s page."""
    doc, _, anchor = target.partition("#")
    url = posixpath.relpath(app.builder.get_target_uri(doc), posixpath.dirname(from_doc) or ".")
    return url + (f"#{anchor}" if anchor else "")


def _check(app, env):
    for old, move in app.config.moved_pages.items():
        if old in env.all_docs:
            raise ValueError(f"moved_pages: {old} is still a page of the book; it cannot also be a moved one")
        if move["to"] not in env.all_docs:
            raise ValueError(f"moved_pages: {old} moves to {move['to']}, which is not a page of the book")
    for doc, anchors in app.config.moved_anchors.items():
        for target in [doc, *(t.partition("#")[0] for t in anchors.values())]:
            if target not in env.all_docs:
                raise ValueError(f"moved_anchors: {target} is not a page of the book")
    return []


def _add_page_script(app, pagename, templatename, context, doctree):
    moved = app.config.moved_anchors.get(pagename)
    if moved:
        urls = {old: _relative(app, pagename, new) for old, new in moved.items()}
        app.add_js_file(None, body=PAGE_SCRIPT.format(moved=json.dumps(urls)), priority=100)


def _write_stubs(app, exception):
    if exception is not None or app.builder.format != "html":
        return
    lang = html.escape(app.config.language or "en")
    for old, move in app.config.moved_pages.items():
        url = _relative(app, old, move["to"])
        title = app.env.titles[move["to"]].astext()
        script = STUB_SCRIPT.format(anchors=json.dumps(move.get("anchors", {})), url=json.dumps(url))
        path = Path(app.outdir, app.builder.get_target_uri(old))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(STUB.format(lang=lang, url=html.escape(url, quote=True), title=html.escape(title),
                                    script=script), encoding="utf-8")


def setup(app):
    app.add_config_value("moved_pages", {}, "html")
    app.add_config_value("moved_anchors", {}, "html")
    app.connect("env-check-consistency", _check)
    app.connect("html-page-context", _add_page_script)
    app.connect("build-finished", _write_stubs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
