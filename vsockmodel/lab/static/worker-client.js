// The page's side of the lab's Python worker (lab-worker.js: Pyodide).
//
// call(fn, ...args) sends one call to vsockmodel.lab.calls and resolves with
// its JSON reply. Python cannot be interrupted mid-run without cross-origin
// isolation, which a plain local server does not give, so stopping a call
// means ending the worker and starting a fresh one (a few seconds, mostly
// from the browser's cache): stop() does that, and every pending call is
// rejected with "stopped".

export class LabWorker {
  // url: lab-worker.js; init: {pyodide, wheels}; hooks: {progress(text), ready(info),
  // failed(text), busy(isBusy)}
  constructor(url, init, hooks) {
    this.url = url;
    this.init = init;
    this.hooks = hooks;
    this.pending = new Map();       // id -> {resolve, reject, fn, started}
    this.nextId = 1;
    this.ready = false;
    this.worker = null;
  }

  // early: {worker, messages} a worker lab.js started already, and what it said so far.
  start(early = null) {
    this.ready = false;
    this.hooks.progress("Loading Python in your browser (Pyodide, about 10 MB, the first time)…");
    const worker = early ? early.worker : new Worker(this.url, { type: "module" });
    this.worker = worker;
    worker.onmessage = (event) => {
      if (worker !== this.worker) return;           // a worker already replaced
      const m = event.data;
      if (m.op === "progress") this.hooks.progress(m.text);
      else if (m.op === "ready") { this.ready = true; this.hooks.ready(m); }
      else if (m.op === "output") this.pending.get(m.id)?.onOutput?.(m.text, m.stream);
      else if (m.op === "result" || m.op === "failed") {
        if (m.id === null) { this.hooks.failed("The Python runtime failed to start: " + m.error); return; }
        const job = this.pending.get(m.id);
        if (!job) return;
        this.pending.delete(m.id);
        this.hooks.busy(this.pending.size > 0);
        if (m.op === "result") job.resolve(JSON.parse(m.value));
        else job.reject(new Error(m.error));
      }
    };
    worker.onerror = (e) => this.hooks.failed("The lab's worker failed: " + (e.message || e));
    if (early) { for (const event of early.messages) worker.onmessage(event); }
    else worker.postMessage({ op: "init", ...this.init });
  }

  call(fn, ...args) { return this.callWith({}, fn, ...args); }

  // meta: kept with the pending call: {generation} (the settings it was made for),
  // {onOutput(text, stream)} (what the call prints, as it prints it).
  callWith(meta, fn, ...args) {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { ...meta, resolve, reject, fn, started: performance.now(), id });
      this.hooks.busy(true);
      this.worker.postMessage({ op: "call", id, fn, args });
    });
  }

  busy() { return this.pending.size > 0; }

  // Ends whatever runs now: a fresh worker, every pending call rejected.
  stop(reason = "stopped") {
    if (this.worker) this.worker.terminate();
    const jobs = [...this.pending.values()];
    this.pending.clear();
    this.hooks.busy(false);
    for (const job of jobs) job.reject(new Error(reason));
    this.start();
    return jobs;
  }
}
