"""The book's version: vsockmodel's, read from pyproject.toml (the one place
it is written), as Sphinx's ``version`` and ``release`` (the footer shows it:
``_assets/book/templates/book-edition.html``) and as the MyST substitution
``{{ version }}`` for the pages' text."""

from vsockmodel import __version__


def _set_version(app, config):
    config.version = config.release = __version__
    config.myst_substitutions = {**(config.myst_substitutions or {}), "version": __version__}


def setup(app):
    app.connect("config-inited", _set_version)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
