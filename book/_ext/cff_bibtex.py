"""``{cff-bibtex}``: the book's BibTeX entry, made from CITATION.cff when the
page is built (vsockmodel.bookkit.citation), so the how-to-use page's
"How to cite this book" box and the citation file cannot disagree."""

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from vsockmodel.bookkit import citation


class CffBibtex(SphinxDirective):
    has_content = False

    def run(self):
        path = citation.CITATION
        self.env.note_dependency(str(path))       # a changed CITATION.cff rebuilds the page
        text = citation.bibtex(citation.load(path))
        block = nodes.literal_block(text, text, language="bibtex", classes=["book-bibtex"])
        return [block]


def setup(app):
    app.add_directive("cff-bibtex", CffBibtex)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
