"""Pages read with JavaScript off: no empty header bar over the text.

The theme marks its script-only controls ``pst-js-only`` and hides them in a
``<noscript>`` style. Everything else in the article header (the sidebar
toggles, the download menu, the full-screen button) also does nothing
without scripts, and the theme's colours wait for its script too
(``data-theme="auto"`` is resolved there), so without scripts the sticky
header is a see-through bar with dead buttons that the text scrolls under.
This adds the book's own ``<noscript>`` style to each page to hide it.
"""

NOSCRIPT_STYLE = "<noscript><style>.bd-header-article { display: none !important; }</style></noscript>\n"


def _add_noscript_style(app, pagename, templatename, context, doctree):
    context["metatags"] = context.get("metatags", "") + NOSCRIPT_STYLE


def setup(app):
    app.connect("html-page-context", _add_noscript_style)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
