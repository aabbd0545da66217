/*
 * The book's own behaviour, on every page (html_js_files in _config.yml).
 * Each part works on the page as Sphinx and the widget manager leave it;
 * without JavaScript the page still reads, figures just do not open larger.
 *
 * 1. Figures open full size in a <dialog>: on a phone a figure is shown at
 *    half its size or less, too small to read its labels. An explorer's
 *    figure opens with its sliders, which move into the dialog meanwhile.
 * 2. Explorers: each carries its sliders (hidden until shown here), its first
 *    figure and its grid of figures as JSON (vsockmodel/bookkit/widgets.py,
 *    Explorer.static_html). Moving a slider shows the grid's figure for the
 *    sliders' values; no widget manager, no kernel. The positions are kept
 *    in the page's history entry, so the back button returns to them.
 * 3. Tables, code and printed output that are wider than the page fade at
 *    the edge they can scroll towards, so a reader knows there is more; a
 *    table with a header row that does not fit is first set tighter, and
 *    only if it still does not fit becomes one card per row.
 * 4. The phone drawers (chapter list, page contents) get a close button.
 * 5. Blocks the theme makes tab stops while they scroll get a name.
 * 6. On paper a link prints its address (print.css); a link whose text
 *    already is its address is marked so that it prints once.
 */
(function () {
  "use strict";

  // This history entry's state as the page loads: read now, while the page is
  // parsed, because Sphinx's search highlighter replaces it with {} once the
  // document is ready (sphinx_highlight.js, on every page).
  var loadedState = history.state;

  var ZOOM_ICON =
    '<svg viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" focusable="false">' +
    '<path d="M1 6V1h5M10 1h5v5M15 10v5h-5M6 15H1v-5" fill="none" stroke="currentColor" stroke-width="2"/></svg>';

  /* ---------------------------------------------------------------- figures */

  var viewer = null;
  var opener = null;

  // The size the page lays a figure out at when there is room: explorer
  // images and notebook outputs say it (width attribute or style), an SVG
  // file has it as its own size. Its text is sized for that (>= 9 CSS px).
  function layoutWidth(img) {
    var w = parseFloat(img.getAttribute("width"));
    if (!w && /px$/.test(img.style.width)) w = parseFloat(img.style.width);
    return w || img.naturalWidth || img.getBoundingClientRect().width;
  }

  function makeViewer() {
    var d = document.createElement("dialog");
    d.className = "book-viewer";
    d.setAttribute("aria-label", "Figure, full size");
    d.innerHTML =
      '<div class="book-viewer__bar"><span class="book-viewer__hint" hidden>Wider than the screen: ' +
      'scroll sideways to see all of it</span><button type="button" class="book-viewer__close">' +
      '<span aria-hidden="true">&times;</span> Close</button></div>' +
      '<div class="book-viewer__controls" hidden></div>' +
      '<div class="book-viewer__body"><img alt=""></div>';
    d.querySelector(".book-viewer__close").addEventListener("click", function () { d.close(); });
    var body = d.querySelector(".book-viewer__body");
    body.addEventListener("scroll", function () { markOverflow([body]); }, { passive: true });
    // A tap on the dimmed page around the figure closes it, as Esc does.
    d.addEventListener("click", function (e) { if (e.target === d) d.close(); });
    // Esc closes it wherever focus is: Sphinx's search highlighter cancels
    // the browser's own Esc unless a control has focus (the figure, say).
    d.addEventListener("keydown", function (e) {
      if (e.key !== "Escape") return;
      e.preventDefault();
      e.stopPropagation();
      d.close();
    });
    d.addEventListener("close", function () {
      d.querySelector("img").removeAttribute("src");
      returnSliders();
      if (opener && document.contains(opener)) opener.focus();
      opener = null;
    });
    document.body.appendChild(d);
    return d;
  }

  // An explorer opened full size takes its sliders along (on a phone the
  // figure in the page is too small to read while they move): the slider
  // panel moves into the dialog, a placeholder keeps its place in the page.
  var lent = null;     // {panel, placeholder, box} while an explorer's sliders are in the dialog

  function lendSliders(box) {
    var panel = box.querySelector(".vsock-explorer__sliders");
    if (!panel) return;
    var placeholder = document.createComment("sliders in the figure viewer");
    panel.parentNode.insertBefore(placeholder, panel);
    var controls = viewer.querySelector(".book-viewer__controls");
    controls.appendChild(panel);
    controls.hidden = false;
    lent = { panel: panel, placeholder: placeholder, box: box };
  }

  function returnSliders() {
    if (!lent) return;
    lent.placeholder.parentNode.replaceChild(lent.panel, lent.placeholder);
    viewer.querySelector(".book-viewer__controls").hidden = true;
    lent = null;
  }

  function openFigure(img, from, box) {
    viewer = viewer || makeViewer();
    returnSliders();
    if (box) lendSliders(box);
    var big = viewer.querySelector("img");
    var base = layoutWidth(img);
    // Never smaller than the figure's layout size (on a phone the reader
    // scrolls or pinches); on a wide screen up to twice that, to fill it.
    var room = document.documentElement.clientWidth - 32;
    big.style.width = Math.round(Math.max(base, Math.min(room, 2 * base))) + "px";
    big.alt = img.alt;
    big.src = img.currentSrc || img.src;
    opener = from || img;
    viewer.showModal();
    var body = viewer.querySelector(".book-viewer__body");
    body.scrollTo(0, 0);
    // A figure wider than the screen (an explorer's, on a phone) says so, and
    // fades at the side there is more of, as wide tables do.
    function cue() {
      markOverflow([body]);
      viewer.querySelector(".book-viewer__hint").hidden = body.scrollWidth <= body.clientWidth + 1;
    }
    if (big.complete) cue(); else big.addEventListener("load", cue, { once: true });
  }

  function zoomButton(cls) {
    var b = document.createElement("button");
    b.type = "button";
    b.className = "book-zoom " + cls;
    b.setAttribute("aria-label", "Full size: open the figure larger");
    b.innerHTML = ZOOM_ICON + "<span>Full size</span>";
    return b;
  }

  // A static figure gets its button below it, in a wrapper; the image
  // itself also opens on a tap or click.
  function wireStaticFigure(img) {
    if (img.closest(".vsock-explorer, .book-zoomable, .book-viewer")) return;
    var wrap = document.createElement("span");
    wrap.className = "book-zoomable";
    img.parentNode.insertBefore(wrap, img);
    wrap.appendChild(img);
    var b = zoomButton("book-zoom--figure");
    b.addEventListener("click", function () { openFigure(img, b); });
    wrap.appendChild(b);
  }

  // An explorer's one button (below it) opens whichever figure shows now.
  function wireExplorerZoom(box) {
    var area = box.parentNode;
    if (!area || area.querySelector(":scope > .book-zoom")) return;
    var b = zoomButton("book-zoom--explorer");
    b.addEventListener("click", function () { openFigure(box.querySelector("img.vsock-explorer-figure"), b, box); });
    area.classList.add("book-explorer-area");
    area.appendChild(b);
  }

  document.addEventListener("click", function (e) {
    var img = e.target.closest && e.target.closest(".bd-article img");
    if (img && !img.closest(".book-viewer") && !img.closest("a")) {
      openFigure(img, null, img.closest(".vsock-explorer--static"));
    }
  });

  /* -------------------------------------------------------------- explorers */

  // The grid holds one figure per combination of slider positions, the last
  // slider varying fastest (row-major, as itertools.product makes it).
  function wireExplorer(box) {
    var data = box.querySelector("script.vsock-explorer-grid");
    var img = box.querySelector("img.vsock-explorer-figure");
    var panel = box.querySelector(".vsock-explorer__sliders");
    if (!data || !img || !panel || box.dataset.bookExplorer) return;
    box.dataset.bookExplorer = "1";
    var grid = JSON.parse(data.textContent);
    var inputs = grid.controls.map(function (c) {
      return box.querySelector('input[data-control="' + c.name + '"]');
    });
    var lab = box.querySelector(".vsock-lab-link a");
    var printed = box.querySelector(".vsock-explorer-print__setting");

    // The positions this history entry last showed (the back button returns here).
    var kept = loadedState && loadedState.bookExplorers && loadedState.bookExplorers[box.id];
    if (kept && kept.length === inputs.length) {
      inputs.forEach(function (input, k) {
        if (kept[k] >= 0 && kept[k] <= Number(input.max)) input.value = String(kept[k]);
      });
    }

    function keep() {
      var state = Object.assign({}, loadedState, history.state);
      state.bookExplorers = Object.assign({}, state.bookExplorers);
      state.bookExplorers[box.id] = inputs.map(function (input) { return input.valueAsNumber; });
      try { history.replaceState(state, ""); } catch (e) { /* a file:// page may refuse: no memory then */ }
    }

    function show() {
      var cell = 0, setting = [];
      inputs.forEach(function (input, k) {
        var option = grid.controls[k].options[input.valueAsNumber];
        cell = cell * grid.controls[k].options.length + input.valueAsNumber;
        // A screen reader says the option ("64 B"), not its position ("0").
        input.setAttribute("aria-valuetext", option);
        input.nextElementSibling.textContent = option;
        setting.push(grid.controls[k].label + " " + option);
      });
      // What a print of the page says it shows (widgets.py's printed_setting).
      if (printed) printed.textContent = "Printed at " + setting.join(", ") + ".";
      var figure = grid.figures[cell];
      if (img.getAttribute("src") !== figure.src) {
        img.src = figure.src;
        img.alt = figure.alt;
      }
      if (lab && figure.lab) lab.setAttribute("href", figure.lab);
      // The same figure full size, while the viewer has this explorer's sliders.
      if (lent && lent.box === box) {
        var big = viewer.querySelector(".book-viewer__body img");
        big.src = figure.src;
        big.alt = figure.alt;
      }
    }

    inputs.forEach(function (input) {
      input.addEventListener("input", function () { show(); keep(); });
    });
    show();     // the browser may have restored other positions (back button)
    // Kept positions, written again once Sphinx's highlighter has cleared the state.
    if (kept) setTimeout(keep, 0);
    panel.hidden = false;
    wireExplorerZoom(box);
  }

  /* ------------------------------------------------------------- overflow */

  var SCROLLERS = ".bd-article .pst-scrollable-table-container, .bd-article pre, .bd-article div.math, .bd-article .table-wrapper";

  function overflowSides(el) {
    var max = el.scrollWidth - el.clientWidth;
    if (max <= 1) return null;
    var sides = [];
    if (el.scrollLeft > 1) sides.push("left");
    if (el.scrollLeft < max - 1) sides.push("right");
    return sides.join(" ");
  }

  // Read every size first, then write: one layout for the whole page.
  function markOverflow(els) {
    var sides = els.map(overflowSides);
    els.forEach(function (el, i) {
      if (sides[i]) {
        if (el.getAttribute("data-overflow") !== sides[i]) el.setAttribute("data-overflow", sides[i]);
      } else if (el.hasAttribute("data-overflow")) {
        el.removeAttribute("data-overflow");
      }
    });
  }

  // Card layout for a table too wide for its container: measured as a
  // table (class off), every table first, then every class set.
  var cardTables = [];

  function labelCells(table) {
    var head = table.tHead && table.tHead.rows[table.tHead.rows.length - 1];
    if (!head || head.cells.length < 2) return false;
    var labels = Array.prototype.map.call(head.cells, function (c) { return c.textContent.trim(); });
    Array.prototype.forEach.call(table.tBodies, function (body) {
      Array.prototype.forEach.call(body.rows, function (row) {
        Array.prototype.forEach.call(row.cells, function (cell, i) {
          if (labels[i]) cell.setAttribute("data-label", labels[i]);
        });
      });
    });
    return true;
  }

  function tooWide(t) {
    return t.getBoundingClientRect().width > t.parentNode.clientWidth + 1;
  }

  // Measured as a table first; a table a little too wide is set tighter
  // (smaller text, less padding), and only one that still does not fit
  // becomes cards. Every table is measured, then every class set, per step.
  function fitTables() {
    cardTables.forEach(function (t) { t.classList.remove("book-cards", "book-tight"); });
    var wide = cardTables.filter(tooWide);
    wide.forEach(function (t) { t.classList.add("book-tight"); });
    wide.filter(tooWide).forEach(function (t) {
      t.classList.remove("book-tight");
      t.classList.add("book-cards");
    });
  }

  function wireOverflow() {
    document.querySelectorAll(".bd-article .pst-scrollable-table-container > table").forEach(function (t) {
      if (labelCells(t)) cardTables.push(t);
    });
    if (!window.ResizeObserver) return;
    var width = 0;
    // The observer reports each element once it is laid out, and again
    // whenever its size changes (a phone turned sideways).
    var ro = new ResizeObserver(function (entries) {
      var w = document.documentElement.clientWidth;
      if (w !== width) { width = w; fitTables(); }
      markOverflow(entries.map(function (e) { return e.target; }));
    });
    var watched = new WeakSet();
    function watchAll() {
      document.querySelectorAll(SCROLLERS).forEach(function (el) {
        if (watched.has(el)) return;
        watched.add(el);
        el.addEventListener("scroll", function () { markOverflow([el]); }, { passive: true });
        ro.observe(el);
      });
    }
    watchAll();
    // Blocks added later (the lab's command lines, drawn after each run)
    // get their cue too: look again, at most once a frame, while nodes arrive.
    var article = document.querySelector(".bd-article");
    if (!article || !window.MutationObserver) return;
    var queued = false;
    new MutationObserver(function () {
      if (queued) return;
      queued = true;
      requestAnimationFrame(function () { queued = false; watchAll(); });
    }).observe(article, { childList: true, subtree: true });
  }

  /* -------------------------------------------------------------- drawers */

  // On a phone the theme shows the chapter list and the page's contents in a
  // <dialog> (its sidebars' nodes, moved in while open, moved back on close),
  // closed by Esc or a tap outside it. A visible close button says so to a
  // touch reader; it is added while the drawer is open and removed on close,
  // so it never lands in the desktop sidebar.
  function wireDrawer(id, label, toggleSelector) {
    var d = document.getElementById(id);
    if (!d || !window.MutationObserver) return;
    var b = document.createElement("button");
    b.type = "button";
    b.className = "book-drawer-close";
    b.setAttribute("aria-label", label);
    b.innerHTML = '<span aria-hidden="true">&times;</span> Close';
    b.addEventListener("click", function () { d.close(); });
    new MutationObserver(function () {
      if (d.open && b.parentNode !== d) d.insertBefore(b, d.firstChild);
    }).observe(d, { attributes: true, attributeFilter: ["open"] });
    d.addEventListener("close", function () {
      b.remove();
      // Back to the button that opened it, so a keyboard reader goes on from
      // there (the theme's own attempt leaves focus on <body>).
      setTimeout(function () {
        if (document.activeElement && document.activeElement !== document.body) return;
        var toggles = document.querySelectorAll(toggleSelector);
        for (var i = 0; i < toggles.length; i++) {
          if (toggles[i].getClientRects().length) { toggles[i].focus(); return; }
        }
      }, 0);
    });
  }

  /* ------------------------------------------------------------ tab stops */

  // The theme makes each of these blocks a tab stop (tabindex 0) while it
  // scrolls, so a keyboard can scroll it (pydata-sphinx-theme's
  // addTabStopsToScrollableElements, same selectors); a screen reader would
  // announce a stop with no name. Each one says what it is while it is one.
  var SCROLL_STOPS = "pre, .nboutput > .output_area, .cell_output > .output, "
    + ".jp-RenderedHTMLCommon, .pst-scrollable-table-container";

  function nameTabStop(el) {
    if (!el.matches(SCROLL_STOPS)) return;
    if (el.tabIndex === 0 && !el.hasAttribute("aria-label")) {
      var what = el.matches(".pst-scrollable-table-container") ? "table"
        : el.closest(".cell_output, .output_area, .output") ? "output" : "code";
      el.setAttribute("role", "group");
      el.setAttribute("aria-label", "Scrollable " + what);
      el.dataset.bookNamed = "";
    } else if (el.tabIndex !== 0 && el.hasAttribute("data-book-named")) {
      el.removeAttribute("role");
      el.removeAttribute("aria-label");
      el.removeAttribute("data-book-named");
    }
  }

  function wireTabStops() {
    var main = document.getElementById("main-content");
    if (!main || !window.MutationObserver) return;
    main.querySelectorAll(SCROLL_STOPS).forEach(nameTabStop);
    new MutationObserver(function (records) {
      records.forEach(function (r) { nameTabStop(r.target); });
    }).observe(main, { subtree: true, attributes: true, attributeFilter: ["tabindex"] });
  }

  /* ---------------------------------------------------------------- print */

  function markBareLinks() {
    document.querySelectorAll(".bd-article a.reference.external").forEach(function (a) {
      if (a.textContent.trim() === a.getAttribute("href")) a.classList.add("book-address-shown");
    });
  }

  /* ----------------------------------------------------------------- start */

  function start() {
    document.documentElement.classList.add("book-js");
    // Explorers first: their sliders are what a reader waits for.
    document.querySelectorAll(".vsock-explorer--static").forEach(wireExplorer);
    wireDrawer("pst-primary-sidebar-modal", "Close the chapter list", ".primary-toggle");
    wireDrawer("pst-secondary-sidebar-modal", "Close the page's contents", ".secondary-toggle");
    document.querySelectorAll(".bd-article img").forEach(wireStaticFigure);
    wireOverflow();
    wireTabStops();
    markBareLinks();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
