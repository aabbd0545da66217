// The lab's Python: Pyodide (CPython for WebAssembly, from npm) in a module
// Web Worker, so that a run never blocks the page. It installs simpy's wheel
// and this book's vsockmodel wheel, then answers calls to vsockmodel.lab.calls.
//
// Messages in:  {op: "init", pyodide: URL, wheels: [URL, ...]}
//               {op: "call", id, fn, args: [...]}   (args are JSON-able)
// Messages out: {op: "progress", text}, {op: "ready", ms, python}
//               {op: "output", id, text, stream}  (what a call prints, as it prints it)
//               {op: "result", id, value}  (the JSON text the Python function returned)
//               {op: "failed", id, error}  (an exception the lab did not expect)

let calls = null;
let current = null;      // the id of the call running now: its prints go with it

async function init(msg) {
  const t0 = performance.now();
  const { loadPyodide } = await import(msg.pyodide + "pyodide.mjs");
  postMessage({ op: "progress", text: "Starting Python (Pyodide)…" });
  const pyodide = await loadPyodide({ indexURL: msg.pyodide });
  pyodide.setStdout({ batched: (text) => postMessage({ op: "output", id: current, text: text + "\n", stream: "stdout" }) });
  pyodide.setStderr({ batched: (text) => postMessage({ op: "output", id: current, text: text + "\n", stream: "stderr" }) });
  const t1 = performance.now();
  postMessage({ op: "progress", text: "Installing simpy and the model…" });
  await pyodide.loadPackage(msg.wheels, { messageCallback: () => {}, errorCallback: (e) => console.warn(e) });
  const t2 = performance.now();
  calls = pyodide.pyimport("vsockmodel.lab.calls");
  const python = pyodide.runPython("import sys; sys.version.split()[0]");
  const t3 = performance.now();
  // phases: the runtime, the wheels, importing the model (scripts/bench-lab reports them)
  postMessage({ op: "ready", ms: t3 - t0, python, phases: { runtime: t1 - t0, wheels: t2 - t1, imports: t3 - t2 } });
}

function call(msg) {
  current = msg.id;
  try {
    postMessage({ op: "result", id: msg.id, value: calls.call(msg.fn, JSON.stringify(msg.args)) });
  } catch (err) {
    postMessage({ op: "failed", id: msg.id, error: String(err && err.message ? err.message : err) });
  } finally {
    current = null;
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
