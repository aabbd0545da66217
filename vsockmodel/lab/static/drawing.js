// Figures are Vega-Lite specifications built in Python (vsockmodel.lab.charts).
// A second worker (lab-render.js: Vega) turns each into SVG text, which the
// page only inserts, so drawing never blocks the page. (Opened as a file, the
// page starts no worker: lab.js draws the precomputed figure itself.)

import { darkMode } from "./dom.js";

export class Drawing {
  constructor(staticUrl, themes, root) {
    this.themes = themes;
    this.root = root;
    this.staticUrl = staticUrl;
    this.pending = new Map();      // id -> container
    this.lastId = 0;
    this.renderer = new Worker(staticUrl + "lab/lab-render.js");
    this.renderer.onmessage = (event) => this.received(event.data);
    new MutationObserver(() => this.redrawAll())
      .observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
    let timer = null, lastWidth = root.clientWidth;
    new ResizeObserver(() => {
      if (root.clientWidth === lastWidth) return;
      lastWidth = root.clientWidth;
      clearTimeout(timer);
      timer = setTimeout(() => this.redrawAll(), 200);
    }).observe(root);
  }

  received({ id, svg, error }) {
    const container = this.pending.get(id);
    this.pending.delete(id);
    if (!container || Number(container.dataset.drawId) !== id) return;   // a newer drawing is coming
    if (error) { container.textContent = "(figure not drawn: " + error + ")"; return; }
    container.innerHTML = svg;
    const figure = container.querySelector("svg");
    if (figure) {
      figure.setAttribute("role", "img");
      figure.setAttribute("aria-label", JSON.parse(container.dataset.spec).description);
    }
    container.dataset.drawn = "true";
  }

  draw(container, spec) {
    container.dataset.spec = JSON.stringify(spec);
    const id = ++this.lastId;
    container.dataset.drawId = String(id);
    delete container.dataset.drawn;
    this.pending.set(id, container);
    const message = { id, spec, width: container.clientWidth || 600, theme: this.themes[darkMode() ? "dark" : "light"] };
    this.renderer.postMessage(message);
  }

  clear(container) {
    delete container.dataset.spec;
    delete container.dataset.drawn;
    container.dataset.drawId = String(++this.lastId);
    container.replaceChildren();
  }

  redrawAll() {
    for (const c of this.root.querySelectorAll(".lab-chart[data-spec]")) this.draw(c, JSON.parse(c.dataset.spec));
  }
}
