"""The notebooks link across pages with Markdown links that JupyterLab can
follow, not with roles it cannot resolve (vsockmodel/bookkit/notebook_links.py);
the book's build turns them into the same references (book/_ext/notebook_links.py,
checked in the built pages by test_links.py)."""

from __future__ import annotations

from vsockmodel.bookkit import notebook_links


def test_no_notebook_has_a_role_into_another_page():
    left = notebook_links.run(write=False)
    assert left == {}, f"run python -m vsockmodel.bookkit.notebook_links: {left}"


def test_a_role_into_another_page_becomes_a_link_to_its_file_and_section():
    idx = notebook_links.index()
    text = ("A {term}`credit update`, {term}`wake-ups <wake-up>`, {ref}`[v2 series] <v2-series>`, "
            "{ref}`ch6-priors`, {doc}`02-per-packet-locking`, {doc}`the lab </book/lab>` and "
            "{ref}`ch5-ex-census`.")
    out, unresolved = notebook_links.rewrite(text, "chapters/05-notification-deferral.ipynb", idx)
    assert unresolved == []
    assert out == ("A [credit update](../book/glossary.md#term-credit-update), "
                   "[wake-ups](../book/glossary.md#term-wake-up), "
                   "[\\[v2 series\\]](../book/references.md#v2-series), "
                   "[Which story fits the measurements](06-measuring.ipynb#ch6-priors), "
                   "[Per-packet socket locking](02-per-packet-locking.ipynb), "
                   "[the lab](../book/lab.md) and "
                   "{ref}`ch5-ex-census`.")                     # a label of the same notebook stays a role
    _, unresolved = notebook_links.rewrite("{term}`no such term`", "book/intro.ipynb", idx)
    assert unresolved == ["{term}`no such term`"]
