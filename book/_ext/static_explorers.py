"""Static pages show each explorer's own HTML, not the ipywidgets view.

An explorer's display carries an ipywidgets view (for Jupyter) and a
``text/html`` form that the book's script drives without a kernel
(vsockmodel/bookkit/widgets.py). ``nb_mime_priority_overrides`` in
_config.yml has the html builder skip the view; this drops what the executed
notebook still carries for it: the widget state myst-nb would put into the
page (every figure a second time, about a megabyte on a chapter page) and the
scripts it loads with it (``nb_ipywidgets_js``).
"""

WIDGET_KEYS = "ipywidgets_"    # myst-nb's keys: ipywidgets_state, ipywidgets_0, ...


def _drop_widget_state(app, doctree):
    env = app.env
    page = getattr(env, "nb_metadata", {}).get(env.docname, {})
    scripts = page.get("js_files", {})
    for key in [k for k in scripts if k.startswith(WIDGET_KEYS)]:
        del scripts[key]


def setup(app):
    # After myst-nb's parser has recorded the page's scripts, before parallel
    # readers hand their environment back.
    app.connect("doctree-read", _drop_widget_state)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
