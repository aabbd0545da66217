"""Markdown links to a label or a glossary term of another page.

The notebooks link across pages with plain Markdown links, which JupyterLab
can follow too (``vsockmodel/bookkit/notebook_links.py`` says why):
``[credit](../book/glossary.md#term-credit)``,
``[\\[v2 series\\]](../book/references.md#v2-series)``. MyST-Parser resolves
the part after ``#`` only against the page's heading anchors; this resolves
it, first, against the page's labels (``(v2-series)=``, also on an untitled
admonition) and glossary terms,
as ``{ref}`` and ``{term}`` would. Anything else is left to MyST-Parser, which
warns about a fragment that matches nothing.
"""

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.nodes import make_refnode


class NotebookLinkResolver(SphinxPostTransform):
    # Before MyST-Parser's own resolver (priority 9), which would only warn.
    default_priority = 8

    def run(self, **kwargs):
        std = self.env.get_domain("std")
        # id in a page -> (page, id, is a glossary term)
        by_page = {}
        for name, (docname, labelid, _title) in std.labels.items():
            by_page[docname, name] = (labelid, False)
        # A label on something without a title (an admonition, a paragraph)
        for name, (docname, labelid) in std.anonlabels.items():
            by_page.setdefault((docname, name), (labelid, False))
        for (objtype, _name), obj in std.objects.items():
            if objtype == "term":
                by_page[obj[0], obj[1]] = (obj[1], True)
        for node in list(self.document.findall(addnodes.pending_xref)):
            if node.get("reftype") != "myst" or node.get("refdomain") != "doc" or not node.get("reftargetid"):
                continue
            page, fragment = node["reftarget"], node["reftargetid"]
            if fragment in self.env.metadata.get(page, {}).get("myst_slugs", {}):
                continue                            # a heading anchor: MyST-Parser's own case
            found = by_page.get((page, fragment))
            if found is None:
                continue
            labelid, term = found
            inner = nodes.inline("", "", classes=["xref", "std", "std-term" if term else "std-ref"])
            inner.extend(node[0].children if len(node) else [nodes.Text(fragment)])
            try:
                ref = make_refnode(self.app.builder, node.get("refdoc", self.env.docname), page, labelid, inner)
            except Exception:                      # a builder with no addresses (NoUri)
                ref = inner
            node.replace_self(ref)


def setup(app):
    app.add_post_transform(NotebookLinkResolver)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
