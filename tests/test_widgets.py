"""Unit tests of the explorer pattern (vsockmodel.widgets) and the book style."""

from __future__ import annotations

import re
import xml.dom.minidom
from urllib.parse import unquote

import ipywidgets as W
import matplotlib
import pytest
from ipywidgets.embed import dependency_state, embed_data

from vsockmodel.bookkit import style
from vsockmodel.bookkit.style import (
    MIN_TEXT_PT,
    MissingUnitError,
    check_text_size,
    figure_svg,
    fmt_size,
    label,
    smallest_text_pt,
    svg_data_uri,
    use_book_style,
)
from vsockmodel.bookkit.widgets import Explorer, explorer

PAYLOADS = [64, 256, 4096]
BUFFERS = [16384, 65536]
IMG_RE = re.compile(r'<img [^>]*alt="([^"]+)"[^>]*src="data:image/svg\+xml,([^"]+)"')


def svg_of(src: str) -> str:
    """The SVG document a data URI from the explorer holds (parsed as XML, as
    a browser does for an <img>)."""
    svg = unquote(src)
    xml.dom.minidom.parseString(svg)
    return svg


def make(draw=None, **kwargs) -> Explorer:
    calls = []

    def default_draw(fig, payload, buffer):
        calls.append((payload, buffer))
        ax = fig.subplots()
        ax.plot([1, 2, 3], [payload, buffer, payload + buffer])
        label(ax, x="time (s)", y="size (bytes)")

    ex = explorer(
        draw or default_draw,
        {"payload": PAYLOADS, "buffer": BUFFERS},
        alt="Test curve at payload {payload} with buffer {buffer}",
        labels={"payload": "payload", "buffer": "socket buffer"},
        formats={"payload": fmt_size, "buffer": fmt_size},
        figsize=(3.2, 2.0),
        **kwargs,
    )
    ex.calls = calls
    return ex


def test_grid_is_built_lazily_with_one_image_per_combination():
    ex = make()
    assert not ex.built and ex.calls == []
    assert ex.grid_shape == (3, 2) and ex.grid_size == 6
    ex.build()
    assert sorted(ex.calls) == sorted((p, b) for p in PAYLOADS for b in BUFFERS)
    # one Stack at level 0 (payload), one per payload value at level 1 (buffer)
    assert [len(level) for level in ex.stacks] == [1, 3]
    assert all(len(s.children) == 2 for s in ex.stacks[1])
    leaves = [leaf for s in ex.stacks[1] for leaf in s.children]
    assert len(leaves) == 6 and all(isinstance(leaf, W.HTML) for leaf in leaves)
    ex.build()  # idempotent
    assert len(ex.calls) == 6


def test_sliders_are_selection_sliders_with_formatted_labels():
    ex = make()
    payload = ex.sliders["payload"]
    assert isinstance(payload, W.SelectionSlider)
    assert payload.options == (("64 B", 64), ("256 B", 256), ("4 KiB", 4096))
    assert payload._options_labels == ("64 B", "256 B", "4 KiB")
    assert payload.description == "payload"
    assert ex.sliders["buffer"].description == "socket buffer"
    assert ex.sliders["buffer"]._options_labels == ("16 KiB", "64 KiB")


def test_jslinks_wire_each_slider_to_every_stack_at_its_level():
    ex = make().build()
    assert len(ex.links) == 1 + 3
    wiring = {(link.source[0].model_id, link.source[1], link.target[0].model_id, link.target[1]) for link in ex.links}
    for name, stacks in zip(ex.names, ex.stacks):
        for stack in stacks:
            assert (ex.sliders[name].model_id, "index", stack.model_id, "selected_index") in wiring


def test_widget_state_contains_the_links_for_the_static_page():
    """The embedded state (what the static HTML gets) carries the jslinks."""
    ex = make().build()
    state = dependency_state([ex.widget] + ex.links, drop_defaults=False)
    links = [s["state"] for s in state.values() if s["model_name"] == "LinkModel"]
    assert len(links) == len(ex.links)
    slider_ids = {s.model_id for s in ex.sliders.values()}
    stack_ids = {s.model_id for level in ex.stacks for s in level}
    for link in links:
        source, target = link["source"], link["target"]
        assert source[0].removeprefix("IPY_MODEL_") in slider_ids and source[1] == "index"
        assert target[0].removeprefix("IPY_MODEL_") in stack_ids and target[1] == "selected_index"
    data = embed_data(views=[ex.widget])
    assert data["view_specs"][0]["model_id"] == ex.widget.model_id


def test_every_image_has_alt_text_for_its_own_parameters():
    ex = make().build()
    seen = set()
    for (i, j), leaf in ex._leaves.items():
        match = IMG_RE.search(leaf.value)
        assert match, leaf.value[:200]
        alt, data = match.groups()
        expected = f"Test curve at payload {fmt_size(PAYLOADS[i])} with buffer {fmt_size(BUFFERS[j])}"
        assert alt == expected
        assert svg_of(data).startswith("<svg")
        seen.add(alt)
    assert len(seen) == 6


def test_select_redraws_that_cell_with_a_fresh_computation():
    state = {"offset": 0}

    def draw(fig, payload, buffer):
        ax = fig.subplots()
        ax.plot([0, 1], [state["offset"], payload])
        ax.set_title(f"offset {state['offset']}")
        label(ax, x="time (s)", y="size (bytes)")

    ex = make(draw=draw).build()
    before = ex.leaf(payload=4096, buffer=65536).value
    state["offset"] = 12345  # "the model changed"
    ex.select(payload=4096, buffer=65536)
    assert ex.leaf(payload=4096, buffer=65536).value == before   # a move only switches figures
    ex.redraw()
    after = ex.leaf(payload=4096, buffer=65536).value
    assert after != before
    assert ex.params == {"payload": 4096, "buffer": 65536}
    assert ex.sliders["payload"].value == 4096 and ex.sliders["buffer"].index == 1
    assert ex.stacks[0][0].selected_index == 2
    assert all(s.selected_index == 1 for s in ex.stacks[1])
    assert ex.image_html == after
    assert ex.last_update_s is not None and 0 < ex.last_update_s < 5
    assert ex.update_count == 1
    # other cells keep their precomputed image
    assert "offset 12345" not in ex.leaf(payload=64, buffer=16384).value


def test_select_accepts_labels_and_rejects_values_off_the_grid():
    ex = make()
    ex.select(payload="256 B")
    assert ex.params["payload"] == 256
    with pytest.raises(ValueError, match="not on the grid"):
        ex.select(payload=100)
    with pytest.raises(KeyError):
        ex.select(nonsense=1)


def test_moving_a_slider_switches_the_kernels_figures_without_drawing():
    ex = make().build()
    n = len(ex.calls)
    ex.sliders["buffer"].index = 1
    assert len(ex.calls) == n                     # every grid cell was drawn at build
    assert all(s.selected_index == 1 for s in ex.stacks[1])
    assert ex.update_count == 1
    ex.redraw()
    assert ex.calls[-1] == (64, 65536)


def test_initial_selection():
    ex = make(initial={"payload": 4096})
    assert ex.params == {"payload": 4096, "buffer": 16384}
    ex.build()
    assert ex.stacks[0][0].selected_index == 2


def test_display_bundle_is_a_widget_view_its_static_form_and_short_text():
    ex = make()
    bundle = ex._repr_mimebundle_()
    assert sorted(bundle) == ["application/vnd.jupyter.widget-view+json", "text/html", "text/plain"]
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == ex.widget.model_id
    assert bundle["text/html"] == ex.static_html
    assert bundle["text/plain"] == "Explorer(payload[3] x buffer[2], 6 figures)"
    assert ex.built


def _static_grid(html_: str) -> dict:
    import json

    data = re.search(r'<script type="application/json" class="vsock-explorer-grid">(.*?)</script>', html_, re.S)
    return json.loads(data.group(1))


def test_static_form_holds_every_figure_in_row_major_order():
    """book.js finds the figure for slider positions (i, j) at i * len(buffer) + j."""
    ex = make(lab={"variant": "p1-p5"}, initial={"payload": 256})
    grid = _static_grid(ex.static_html)
    assert [c["name"] for c in grid["controls"]] == ["payload", "buffer"]
    assert grid["controls"][1] == {"name": "buffer", "label": "socket buffer", "options": ["16 KiB", "64 KiB"]}
    assert len(grid["figures"]) == ex.grid_size
    for i, payload in enumerate(PAYLOADS):
        for j, buffer in enumerate(BUFFERS):
            figure = grid["figures"][i * len(BUFFERS) + j]
            src, alt = IMG_RE.search(ex.leaf(payload=payload, buffer=buffer).value).group(2, 1)
            assert figure["src"] == "data:image/svg+xml," + src
            assert figure["alt"] == ex.alt_text([i, j]) == alt
            assert figure["lab"] == f"../book/lab.html#variant=p1-p5&payload={payload}&buffer={buffer}"


def test_static_form_sliders_are_named_range_inputs_hidden_until_the_script_runs():
    ex = make(initial={"payload": 4096})
    html_ = ex.static_html
    assert re.search(r'<div class="vsock-explorer__sliders" hidden>', html_)
    inputs = re.findall(r'<input type="range" id="([^"]+)" data-control="(\w+)" min="0" max="(\d+)" '
                        r'step="1" value="(\d+)" autocomplete="off" aria-valuetext="([^"]+)">', html_)
    assert [i[1:] for i in inputs] == [("payload", "2", "2", "4 KiB"), ("buffer", "1", "0", "16 KiB")]
    for ident, *_ in inputs:
        assert f'<label for="{ident}">' in html_ and f'<output for="{ident}" aria-hidden="true">' in html_
    # The figure without JavaScript is the initial one, with the line saying why it does not move.
    assert IMG_RE.search(html_).group(1) == ex.alt_text([2, 0])
    assert "<noscript>" in html_ and "need JavaScript" in html_
    assert "it shows payload 4 KiB, socket buffer 16 KiB." in html_
    # Two explorers on a page have different ids; the same explorer the same one at every build.
    other = make(initial={"payload": 64}).static_html
    assert inputs[0][0] == re.search(r'id="([^"]+)"', make(initial={"payload": 4096}).static_html).group(1) + "-payload"
    assert re.search(r'id="([^"]+)"', other).group(1) != inputs[0][0].removesuffix("-payload")


def test_static_form_says_on_paper_what_the_sliders_vary_and_what_is_printed():
    html_ = make(initial={"payload": 4096}).static_html
    m = re.search(r'<p class="vsock-explorer-print" hidden>(.*?)</p>', html_)
    assert m, "no print-only caption"
    assert m.group(1) == ("Interactive online: its sliders vary payload (64 B to 4 KiB) and socket buffer "
                          "(16 KiB to 64 KiB). <span class=\"vsock-explorer-print__setting\">"
                          "Printed at payload 4 KiB, socket buffer 16 KiB.</span>")
    one = explorer(lambda fig, payload: label(fig.subplots(), x="time (s)", y="size (bytes)"),
                   {"payload": [64]}, alt="at {payload}").static_html
    assert "its sliders vary payload (64)." in one


def test_static_form_keeps_its_script_element_whole():
    def draw(fig, payload):
        ax = fig.subplots()
        ax.set_title("</script> in a title")
        label(ax, x="time (s)", y="size (bytes)")

    html_ = explorer(draw, {"payload": [64, 256]}, alt="</script> {payload}").static_html
    assert html_.count("</script>") == 1 and html_.endswith("</script></div>")
    assert _static_grid(html_)["figures"][1]["alt"] == "</script> 256"


def test_bad_arguments_fail_early():
    with pytest.raises(ValueError, match="alt text"):
        explorer(lambda fig, x: None, {"x": [1]}, alt="")
    with pytest.raises(ValueError, match="not a control"):
        explorer(lambda fig, x: None, {"x": [1]}, alt="{y}")
    with pytest.raises(ValueError, match="no values"):
        explorer(lambda fig, x: None, {"x": []}, alt="x")
    with pytest.raises(ValueError, match="not unique"):
        explorer(lambda fig, x: None, {"x": [1, 2]}, alt="x", formats={"x": lambda v: "same"})
    for figsize in ((0, 3), (6.4, float("nan")), (6.4,), "wide", (100, 3)):
        with pytest.raises(ValueError, match="figsize"):
            explorer(lambda fig, x: None, {"x": [1]}, alt="x", figsize=figsize)


def test_images_are_small():
    ex = make().build()
    sizes = [len(leaf.value) for leaf in ex._leaves.values()]
    assert max(sizes) < 12_000


# ---------------------------------------------------------------- style


def test_label_requires_a_unit_in_parentheses():
    fig = matplotlib.figure.Figure()
    ax = fig.subplots()
    label(ax, x="payload (bytes)", y="throughput (Gbit/s)", title="t")
    assert ax.get_xlabel() == "payload (bytes)" and ax.get_ylabel() == "throughput (Gbit/s)"
    label(ax, y="change (%)")
    for bad in ["payload", "throughput ()", "(bytes) payload", "rate ( )"]:
        with pytest.raises(MissingUnitError):
            label(ax, x=bad)
    with pytest.raises(ValueError):  # MissingUnitError is a ValueError
        label(ax, y="latency")


@pytest.mark.parametrize(
    "n, text",
    [(0, "0 B"), (64, "64 B"), (1023, "1023 B"), (1024, "1 KiB"), (1536, "1.5 KiB"),
     (3732, "3.6 KiB"), (65536, "64 KiB"), (262144, "256 KiB"), (1 << 20, "1 MiB"),
     (2 << 30, "2 GiB")],
)
def test_fmt_size(n, text):
    assert fmt_size(n) == text


def test_book_style_palette_and_background():
    use_book_style()
    rc = matplotlib.rcParams
    assert rc["figure.facecolor"] == "white" and rc["savefig.transparent"] is False
    colors = rc["axes.prop_cycle"].by_key()["color"]
    assert colors[0] == style.COLORS["blue"] and set(colors) == set(style.COLORS.values())


def test_figures_are_opaque_white_backed_svg_at_100_px_per_inch():
    ex = make().build()
    html = ex.image_html
    assert 'width="320" height="200"' in html            # figsize (3.2, 2.0) at 100 px/in
    svg = svg_of(IMG_RE.search(html).group(2))
    # The first shape is the figure's background: an opaque white rectangle.
    first = re.search(r"<path d='[^']*' style='fill: #([0-9a-f]{6})'", svg)
    assert first and first.group(1) == "ffffff"
    assert "<text" in svg and "<!--" not in svg and "<metadata" not in svg


def test_svg_data_uri_keeps_what_xml_needs():
    svg = "<svg xmlns='http://www.w3.org/2000/svg'><text fill=\"#123456\">it's 50% & <done></text></svg>"
    svg = svg.replace("&", "&amp;").replace("<done>", "&lt;done&gt;")
    uri = svg_data_uri(svg)
    assert uri.startswith("data:image/svg+xml,") and '"' not in uri and "#" not in uri
    back = unquote(uri.split(",", 1)[1])
    dom = xml.dom.minidom.parseString(back)
    assert dom.getElementsByTagName("text")[0].firstChild.data == "it's 50% & <done>"
    assert dom.getElementsByTagName("text")[0].getAttribute("fill") == "#123456"


def test_sliders_and_figures_have_no_null_tooltip():
    ex = make().build()
    assert all(s.tooltip == "" for s in ex.sliders.values())
    assert all(leaf.tooltip == "" for leaf in ex._leaves.values())


def test_figures_share_one_layout_and_style():
    ex = make().build()
    leaves = list(ex._leaves.values())
    assert len({id(leaf.layout) for leaf in leaves}) == 1
    assert len({id(leaf.style) for leaf in leaves}) == 1
    assert len({id(s.layout) for level in ex.stacks for s in level}) == 1


def test_displaying_an_explorer_shows_one_output():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.display import display
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()
    ex = make()
    with capture_output() as out:
        display(ex)                           # what Jupyter does with a cell's value
    assert [sorted(o.data) for o in out.outputs] == [
        ["application/vnd.jupyter.widget-view+json", "text/html", "text/plain"],
    ]


def test_text_smaller_than_the_minimum_is_refused():
    def tiny(fig, payload, buffer):
        ax = fig.subplots()
        ax.plot([1, 2], [payload, buffer])
        ax.set_title("tiny", fontsize=MIN_TEXT_PT - 0.5)
        label(ax, x="time (s)", y="size (bytes)")

    with pytest.raises(ValueError, match="too small to read"):
        make(draw=tiny).build()


def test_smallest_text_counts_tick_labels_once_drawn():
    fig = matplotlib.figure.Figure(figsize=(3, 2))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1])
    ax.tick_params(labelsize=6)
    ax.set_xlabel("x (s)", fontsize=10)
    figure_svg(fig)
    assert smallest_text_pt(fig) == 6
    with pytest.raises(ValueError, match="6 pt"):
        check_text_size(fig)


def test_the_benchmark_times_slider_updates_of_a_built_explorer():
    # Not a timing assertion (speed is for the benchmark): the benchmark's widget
    # section runs, moves the sliders and reports each move's redraw time.
    from vsockmodel.bookkit.bench import widget_update_ms
    w = widget_update_ms(moves=3)
    assert w is not None, "ipywidgets and matplotlib are installed for the book"
    assert w["moves"] == 3 and 0 < w["p50_ms"] <= w["max_ms"] and w["grid_build_s"] > 0


def test_an_explorer_links_each_figure_to_the_lab_with_its_settings():
    from urllib.parse import parse_qs
    import re as _re

    def draw(fig, payload, buffer):
        ax = fig.subplots()
        ax.plot([0, 1], [0, payload])
        label(ax, x="time (s)", y="bytes (B)")

    ex = explorer(draw, {"payload": [64, 4096], "buffer": [65536]}, alt="payload {payload}",
                  formats={"payload": fmt_size, "buffer": fmt_size}, lab={"variant": "p1-p5"}).build()
    # The book's page: the lab is a page beside the chapter.
    static = ex.static_html
    href = _re.search(r'href="\.\./book/lab\.html#([^"]+)"', static).group(1).replace("&amp;", "&")
    assert parse_qs(href) == {"variant": ["p1-p5"], "payload": ["64"], "buffer": ["65536"]}
    assert "to vary them freely</p>" in static          # the lab has every slider's setting
    # Jupyter (the widget view): the served book's lab, in a new tab, and how to serve it.
    html_ = ex.leaf(payload=4096).value
    link = _re.search(r'<a href="http://localhost:8000/book/lab\.html#([^"]+)" target="_blank" rel="noopener">', html_)
    assert link and parse_qs(link.group(1).replace("&amp;", "&")) == {
        "variant": ["p1-p5"], "payload": ["4096"], "buffer": ["65536"]}
    assert "<code>python3 -m http.server --directory _build/html 8000</code>" in html_
    plain = explorer(draw, {"payload": [64], "buffer": [65536]}, alt="p").build()
    assert "lab.html" not in plain.leaf().value


def test_lab_link_names_the_sliders_the_lab_has_no_setting_for():
    def draw(fig, payload, wake, noise):
        ax = fig.subplots()
        ax.plot([0, 1], [0, payload])
        label(ax, x="time (s)", y="bytes (B)")

    ex = explorer(draw, {"payload": [64], "wake": [200], "noise": [2]}, alt="p",
                  labels={"wake": "reader wake-up", "noise": "host noise"}, lab={"variant": "p1-p3"})
    assert "(it has no reader wake-up or host noise setting). The lab runs" in ex.build().leaf().value
    assert "(it has no reader wake-up or host noise setting)</p>" in ex.static_html


def test_alt_may_be_a_function_of_the_sliders_values():
    # So that an explorer's alt text can give each figure's own numbers.
    seen = []

    def alt(payload, buffer):
        seen.append((payload, buffer))
        return f"{payload + buffer} bytes in all"

    ex = explorer(
        lambda fig, payload, buffer: label(fig.subplots(), x="time (s)", y="size (bytes)"),
        {"payload": PAYLOADS, "buffer": BUFFERS}, alt=alt, figsize=(3.2, 2.0)).build()
    assert IMG_RE.search(ex.leaf(payload=4096, buffer=65536).value).group(1) == "69632 bytes in all"
    assert sorted(set(seen)) == sorted((p, b) for p in PAYLOADS for b in BUFFERS)
    with pytest.raises(ValueError, match="alt function gave no text"):
        explorer(lambda fig, payload: None, {"payload": [1]}, alt=lambda payload: " ").build()


def test_show_with_alt_puts_an_img_with_that_text_first():
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()

    def figure():
        fig = matplotlib.figure.Figure(figsize=(3, 2))
        ax = fig.subplots()
        ax.plot([0, 1], [0, 1])
        label(ax, x="time (s)", y="size (bytes)")
        return fig

    with capture_output() as out:
        style.show(figure(), alt="A line from 0 to 1 byte over 1\n second")
    data = out.outputs[0].data
    img = re.fullmatch(r'<img class="book-figure" alt="([^"]+)" width="(\d+)" height="(\d+)" '
                       r'style="max-width:100%;height:auto" src="data:image/svg\+xml,([^"]+)">', data["text/html"])
    assert img and img.group(1) == "A line from 0 to 1 byte over 1 second"
    assert svg_of(img.group(4)) and data["image/svg+xml"].startswith("<svg")
    with capture_output() as out:
        style.show(figure())                  # the cell's metadata gives the alt text
    assert "text/html" not in out.outputs[0].data
    with pytest.raises(ValueError, match="^alt: "):
        style.show(figure(), alt="  ")
