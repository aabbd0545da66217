// The browser lab's entry point (a classic script, so that it also runs on a
// page opened as a file). Served by a web server, it loads the lab's modules
// (lab-main.js and what it imports). Opened as a file, where browsers refuse
// module scripts, workers and so Python, it says so plainly, shows the run the
// book's build precomputed, drawn, and offers no control that would do nothing.
(function () {
  "use strict";
  const DATA = window.VSOCK_LAB_DATA;
  const root = document.getElementById("vsock-lab");
  if (!root || !DATA) return;
  const STATIC = new URL("../", document.currentScript.src).href;   // _static/

  if (location.protocol !== "file:") {
    // Python starts loading at once, while the page's modules load; what the
    // worker says meanwhile is kept for the page (worker-client.js adopts it).
    const worker = new Worker(STATIC + "lab/lab-worker.js", { type: "module" });
    const early = { worker, messages: [] };
    worker.onmessage = (event) => early.messages.push(event);
    worker.postMessage({ op: "init", pyodide: STATIC + "vendor/pyodide/", wheels: DATA.wheels.map((w) => STATIC + "lab/" + w) });
    import(STATIC + "lab/lab-main.js").then((m) => m.start(root, DATA, STATIC, early)).catch((err) => {
      root.querySelector(".lab-status").textContent = "The lab failed to start: " + (err && err.message || err);
    });
    return;
  }

  // ---- opened as a file -------------------------------------------------------------
  const el = (tag, attrs, text) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const run = DATA.precomputed.run;
  const status = el("p", { class: "lab-status lab-error", role: "status" },
    "The live lab needs a local web server (browsers block its Python runtime on file:// pages): run  "
    + "python3 -m http.server --directory _build/html 8000  and open http://localhost:8000/book/lab.html");
  const note = el("p", { class: "lab-provenance", "data-live": "false" },
    "Below: the default settings' run, precomputed with CPython when the book was built. Nothing here can be "
    + "changed or run until the page comes from a server.");
  const table = el("table", { class: "lab-headline" });
  for (const r of run.headline) {
    const row = el("tr", { "data-key": r.key });
    row.append(el("th", { scope: "row" }, r.label), el("td", {}, r.text + (r.unit && r.text !== "-" ? " " + r.unit : "")));
    table.append(row);
  }
  const chart = el("div", { class: "lab-chart", "data-chart": "worker_time" });
  const alt = el("p", { class: "lab-alt" }, run.charts.worker_time.description);
  root.replaceChildren(status, note, el("p", { class: "lab-summary" }, run.derived.summary), table,
                       el("h4", {}, "The RX worker's time"), chart, alt);
  root.dataset.fileProtocol = "true";
  // Vega on this page's own thread (no worker from a file): one small figure.
  const script = (src) => new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = STATIC + src;
    s.onload = resolve;
    s.onerror = reject;
    document.head.append(s);
  });
  script("vendor/vega/vega.min.js").then(() => script("vendor/vega/vega-lite.min.js")).then(async () => {
    const dark = document.documentElement.dataset.theme === "dark";
    const spec = { ...run.charts.worker_time, width: Math.max(240, chart.clientWidth || 600) };
    spec.config = { ...spec.config, ...DATA.schema.themes[dark ? "dark" : "light"] };
    const view = new vega.View(vega.parse(vegaLite.compile(spec).spec), { renderer: "none" });
    chart.innerHTML = await view.toSVG();
    view.finalize();
    const svg = chart.querySelector("svg");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", run.charts.worker_time.description);
    chart.dataset.drawn = "true";
  }).catch(() => { chart.textContent = "(figure not drawn)"; });
})();
