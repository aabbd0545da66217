"""Let Sphinx read the book's pages in parallel (scripts/build_sphinx.py).

sphinx_external_toc always loads sphinx_multitoc_numbering, which does not
declare whether it is safe for parallel reading, so Sphinx falls back to one
process. The book turns that numbering off (``html.use_multitoc_numbering:
false``): the extension then only registers a config value and leaves every
document alone, which is safe in any number of processes. This says so.
"""


def _declare_safe(app, config):
    ext = app.extensions.get("sphinx_multitoc_numbering")
    if ext is not None and not config.use_multitoc_numbering:
        ext.parallel_read_safe = True


def setup(app):
    app.connect("config-inited", _declare_safe)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
