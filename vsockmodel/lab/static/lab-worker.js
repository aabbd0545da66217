// The lab's Python: Pyodide (CPython for WebAssembly, from npm) in a module
// Web Worker, so that a run never blocks the page. It installs simpy's wheel
// and this book's vsockmodel wheel, then answers calls to vsockmodel.lab.api.
//
// Messages in:  {op: "init", pyodide: URL, wheels: [URL, ...]}
//               {op: "call", id, fn, args: [...]}   (args are JSON-able)
// Messages out: {op: "progress", text}, {op: "ready", ms, python}
//               {op: "result", id, value}  (the JSON text the Python function returned)
//               {op: "failed", id, error}  (an exception the API did not expect)

let api = null;

async function init(msg) {
  const t0 = performance.now();
  const { loadPyodide } = await import(msg.pyodide + "pyodide.mjs");
  postMessage({ op: "progress", text: "Starting Python (Pyodide)…" });
  const pyodide = await loadPyodide({ indexURL: msg.pyodide, stdout: () => {}, stderr: () => {} });
  postMessage({ op: "progress", text: "Installing simpy and the model…" });
  await pyodide.loadPackage(msg.wheels, { messageCallback: () => {}, errorCallback: (e) => console.warn(e) });
  api = pyodide.pyimport("vsockmodel.lab.api");
  const python = pyodide.runPython("import sys; sys.version.split()[0]");
  postMessage({ op: "ready", ms: performance.now() - t0, python });
}

function call(msg) {
  try {
    // Objects cross as JSON text; null as undefined, which Python sees as None
    // (Pyodide turns a JS null into its own jsnull, not None).
    const args = msg.args.map((a) => (a === null ? undefined : typeof a === "object" ? JSON.stringify(a) : a));
    const value = api[msg.fn](...args);
    postMessage({ op: "result", id: msg.id, value: typeof value === "string" ? value : JSON.stringify(value) });
  } catch (err) {
    postMessage({ op: "failed", id: msg.id, error: String(err && err.message ? err.message : err) });
  }
}

onmessage = (event) => {
  const msg = event.data;
  if (msg.op === "init") {
    init(msg).catch((err) => postMessage({ op: "failed", id: null, error: String(err && err.message || err) }));
  } else if (msg.op === "call") {
    call(msg);
  }
};
