// Draws the lab's figures off the page's main thread: Vega-Lite compiles each
// specification (built in Python, vsockmodel.lab.charts) and Vega renders it
// to SVG text, which the page only inserts. Compiling and rendering a figure
// takes tens of milliseconds: on the main thread it would freeze the page
// (a long task per sweep point).
//
// In:  {id, spec, width, theme}  (theme: a Vega config merged over the spec's own)
// Out: {id, svg} or {id, error}
importScripts("../vendor/vega/vega.min.js", "../vendor/vega/vega-lite.min.js");

function merge(base, over) {
  const out = { ...base };
  for (const [k, v] of Object.entries(over || {})) {
    out[k] = v && typeof v === "object" && !Array.isArray(v) && base && typeof base[k] === "object"
      ? merge(base[k], v) : v;
  }
  return out;
}

onmessage = async (event) => {
  const { id, spec, width, theme } = event.data;
  try {
    const sized = { ...spec, width: Math.max(240, Math.floor(width)), config: merge(spec.config, theme) };
    const view = new vega.View(vega.parse(vegaLite.compile(sized).spec), { renderer: "none" });
    const svg = await view.toSVG();
    view.finalize();
    postMessage({ id, svg });
  } catch (err) {
    postMessage({ id, error: String(err && err.message || err) });
  }
};
