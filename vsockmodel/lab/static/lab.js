// The browser lab: the vsockmodel simulator, live in the page.
//
// The controls are built from the parameter schema the package exports
// (lab-data.js, written at build time by vsockmodel.lab.build), so they have
// the API's names, ranges and help. Values typed or slid here go to the
// package's own validation in the worker (lab-worker.js: Pyodide), which also
// runs the model and builds every figure's Vega-Lite specification; this file
// only renders what comes back. Until the worker is ready, the page shows a run
// precomputed with CPython when the book was built.
//
// The whole configuration lives in the URL's #fragment, so a link reproduces it.
//
// The page is built in several short tasks, not one long one (each `await
// nextTask()` lets the browser paint and answer input in between), so the
// page never stops responding for more than a few tens of milliseconds.
(async function () {
  "use strict";

  const DATA = window.VSOCK_LAB_DATA;
  const root = document.getElementById("vsock-lab");
  if (!root || !DATA) return;
  const STATIC = new URL("../", document.currentScript.src).href;   // _static/
  const SCHEMA = DATA.schema;
  const PARAMS = SCHEMA.parameters.filter((p) => p.name !== "trace");
  const BY_NAME = Object.fromEntries(PARAMS.map((p) => [p.name, p]));
  const GROUPS = [["kernel", "Kernel"], ["workload", "Workload"], ["socket", "Socket"],
                  ["batch", "Lock batch (patch 2)"], ["host", "Host"], ["run", "Run"]];
  const STALE_KILL_MS = 2000;   // a superseded call still running after this: restart the worker
  const nextTask = () => new Promise((resolve) => setTimeout(resolve, 0));

  // ---- small helpers -------------------------------------------------------------------
  const el = (tag, attrs = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  };
  const KI = 1024, MI = KI * KI, GI = MI * KI;
  // The shortest text the package reads back as exactly n bytes ("4K", "3732").
  const sizeText = (n) => (n % GI === 0 ? n / GI + "G" : n % MI === 0 ? n / MI + "M"
    : n % KI === 0 ? n / KI + "K" : String(n));
  // As vsockmodel.model.units.fmt_size: "64 KiB", "3.6 KiB", "100 B".
  // One decimal, ties to even as Python's format rounds them (781.25 -> "781.2").
  const oneDecimal = (x) => {
    const tenths = x * 10, floor = Math.floor(tenths);
    const r = tenths - floor === 0.5 ? (floor % 2 === 0 ? floor : floor + 1) : Math.round(tenths);
    return (r / 10).toFixed(1);
  };
  const fmtSize = (n) => {
    for (const [unit, factor] of [["GiB", GI], ["MiB", MI], ["KiB", KI]]) {
      if (n >= factor) return (Number.isInteger(n / factor) ? String(n / factor) : oneDecimal(n / factor)) + " " + unit;
    }
    return n + " B";
  };
  // For a screen reader, exact: "2 KiB" is 2048 only; 2049 reads "2,049 B (2.0 KiB)".
  const fmtExact = (n) => {
    const text = fmtSize(n), [number, unit] = text.split(" ");
    const factor = { B: 1, KiB: KI, MiB: MI, GiB: GI }[unit];
    return Number(number) * factor === n ? text : n.toLocaleString("en") + " B (" + text + ")";
  };
  const STEPS = 16;             // log-scale sliders: 16 positions per doubling
  const toPos = (n) => Math.round(Math.log2(Math.max(1, n)) * STEPS);
  const fromPos = (v) => Math.max(1, Math.round(2 ** (v / STEPS)));
  const darkMode = () => document.documentElement.dataset.theme === "dark"
    || (document.documentElement.dataset.theme !== "light" && matchMedia("(prefers-color-scheme: dark)").matches);

  // ---- state: the configuration, and its URL ----------------------------------------------
  const state = { values: {}, a: null, b: null, mode: "run", generation: 0, ready: false };
  for (const p of PARAMS) state.values[p.name] = p.default;

  // What a link gets wrong is said, naming it (and ignored): an unknown name, a
  // name given twice, a mode or a switch value that does not exist. Sizes and
  // numbers go to the API as text, which refuses them by name.
  const MODES = ["run", "compare", "sweep", "problems"];
  const linkProblems = [];
  function readHash() {
    const h = new URLSearchParams(location.hash.slice(1));
    const seen = new Set();
    for (const [k, v] of h) {
      if (seen.has(k)) { linkProblems.push(`${k} is given twice; the first value is used`); continue; }
      seen.add(k);
      if (k in BY_NAME) {
        const p = BY_NAME[k], value = decodeValue(p, v);
        if (value === undefined) linkProblems.push(`${k}=${v}: ${p.kind === "tristate"
          ? "use true, false, or nothing for the variant's default" : "use true or false"}; left at the default`);
        else if (p.kind === "choice" && !p.choices.includes(value)) {
          linkProblems.push(`${k}=${v}: not one of ${p.choices.join(", ")}; left at the default`);
        } else state.values[k] = value;
      } else if (k === "mode") {
        if (MODES.includes(v)) state.mode = v;
        else linkProblems.push(`mode=${v}: no such mode (${MODES.join(", ")}); one run shown`);
      } else if (k === "qchapter" || k === "qseed") state[k] = v;
      else if (k === "pairs") {
        const [lo, hi] = SCHEMA.compare_replications;
        const n = Number(v);
        if (Number.isInteger(n) && n >= lo && n <= hi) state.pairs = String(n);
        else linkProblems.push(`pairs=${v}: the lab runs ${lo} to ${hi} pairs; left at the default`);
      }
      else if (k === "a" || k === "b") {
        let side = null;
        try { side = JSON.parse(v); } catch (e) { /* said below */ }
        const isConfig = side && typeof side === "object" && !Array.isArray(side)
          && Object.keys(side).every((name) => name in BY_NAME);
        if (isConfig) state[k] = side;
        else linkProblems.push(`${k}: not a configuration of the lab's settings; ${k.toUpperCase()} not set`);
      } else if (k === "matched") state.matched = v === "1";
      else linkProblems.push(`${k}: not a setting of the lab (it has ${PARAMS.map((p) => p.name).join(", ")}); ignored`);
    }
  }
  // undefined: not a value this parameter can take from a link.
  function decodeValue(p, v) {
    if (p.kind === "bool" || p.kind === "tristate") {
      const word = v.toLowerCase();
      return word === "true" ? true : word === "false" ? false : p.kind === "tristate" && v === "" ? null : undefined;
    }
    if (v === "" && p.optional) return null;
    return v;
  }
  function writeHash() {
    const h = new URLSearchParams();
    for (const p of PARAMS) {
      const v = state.values[p.name];
      if (v !== p.default && String(v) !== String(p.default)) h.set(p.name, v === null ? "" : String(v));
    }
    if (state.mode !== "run") h.set("mode", state.mode);
    if (state.a) h.set("a", JSON.stringify(state.a));
    if (state.b) h.set("b", JSON.stringify(state.b));
    if (state.matched) h.set("matched", "1");
    if (state.pairs) h.set("pairs", state.pairs);
    if (state.qchapter) h.set("qchapter", state.qchapter);
    if (state.qseed) h.set("qseed", state.qseed);
    history.replaceState(null, "", "#" + h.toString());
  }

  // What the API gets: every parameter that applies to this variant and workload.
  function applies(p, values) {
    const a = p.applies;
    return (!a.variants.length || a.variants.includes(values.variant))
      && (!a.workload || a.workload === values.workload);
  }
  function configOf(values) {
    const out = {};
    for (const p of PARAMS) {
      if (!applies(p, values)) continue;
      const v = values[p.name];
      if (v === p.default || v === null || v === undefined) continue;
      out[p.name] = v;
    }
    return out;
  }

  // ---- the worker ---------------------------------------------------------------------------
  let worker = null, nextId = 1;
  const pending = new Map();   // id -> {resolve, reject, generation, started}

  function startWorker() {
    if (location.protocol === "file:") return;
    status("Loading Python in your browser (Pyodide, about 10 MB, the first time)…", true);
    worker = new Worker(STATIC + "lab/lab-worker.js", { type: "module" });
    worker.onmessage = (event) => {
      const m = event.data;
      if (m.op === "progress") status(m.text, true);
      else if (m.op === "ready") {
        state.ready = true;
        root.dataset.ready = "true";
        status(`Live: Python ${m.python} in your browser, ready in ${(m.ms / 1000).toFixed(1)} s.`, false);
        onInput();
        if (resumeCompare) { resumeCompare = false; compareNow(); }
      } else if (m.op === "result" || m.op === "failed") {
        const job = pending.get(m.id);
        if (m.id === null) { status("The Python runtime failed to start: " + m.error, false, true); return; }
        if (!job) return;
        pending.delete(m.id);
        if (m.op === "result") job.resolve(JSON.parse(m.value));
        else job.reject(new Error(m.error));
      }
    };
    worker.onerror = (e) => status("The lab's worker failed: " + (e.message || e), false, true);
    worker.postMessage({ op: "init", pyodide: STATIC + "vendor/pyodide/",
                         wheels: DATA.wheels.map((w) => STATIC + "lab/" + w) });
  }
  let resumeCompare = false;    // a compare cut off by a restart runs again once the worker is back
  function restartWorker() {
    if ([...pending.values()].some((job) => job.fn === "compare")) resumeCompare = true;
    worker.terminate();
    for (const job of pending.values()) job.reject(new Error("cancelled"));
    pending.clear();
    state.ready = false;
    delete root.dataset.ready;
    startWorker();
  }
  function call(fn, ...args) { return callAt(state.generation, fn, ...args); }
  // generation null: the call's inputs are its own (compare's A and B), so a
  // change of the controls does not make it stale.
  function callAt(generation, fn, ...args) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, generation, fn, started: performance.now() });
      worker.postMessage({ op: "call", id, fn, args });
    });
  }
  // A call whose result is wanted only if the input has not changed meanwhile.
  async function fresh(fn, ...args) {
    const generation = state.generation;
    const value = await call(fn, ...args);
    if (generation !== state.generation) throw new Error("stale");
    return value;
  }
  // Python cannot be interrupted mid-run without cross-origin isolation, which a
  // plain local server does not give: a stale run that goes on too long costs a
  // fresh worker instead.
  setInterval(() => {
    const now = performance.now();
    for (const job of pending.values()) {
      if (job.generation !== null && job.generation !== state.generation && now - job.started > STALE_KILL_MS) {
        status("Stopping a run that no longer matches the settings…", true);
        restartWorker();
        return;
      }
    }
  }, 250);

  await nextTask();
  // ---- the page's skeleton ---------------------------------------------------------------------
  const statusLine = el("p", { class: "lab-status", role: "status", "aria-live": "polite" });
  function status(text, busy, error) {
    statusLine.textContent = text;
    statusLine.classList.toggle("lab-busy", !!busy);
    statusLine.classList.toggle("lab-error", !!error);
  }
  const form = el("form", { class: "lab-controls", onsubmit: (e) => e.preventDefault() });
  const generalError = el("p", { class: "lab-error-text", role: "alert" });
  const modes = el("div", { class: "lab-modes", role: "tablist", "aria-label": "What to do" });
  const out = el("section", { class: "lab-output", "aria-label": "Results", id: "lab-results" });
  const staleNote = el("p", { class: "lab-stale-note", hidden: true,
    text: "The settings have an error, so nothing was run: the results below are from earlier settings." });
  // On a phone the results are below a long form: one tap gets there (a button, not
  // a #link, because the page's #fragment holds the settings).
  const jump = el("button", { type: "button", class: "lab-button lab-jump", text: "Go to the results ↓",
                              onclick: () => {
                                modes.scrollIntoView({ behavior: "smooth" });
                                modes.querySelector("[aria-selected=true]")?.focus({ preventScroll: true });
                              } });
  const linkNote = el("p", { class: "lab-link-note lab-error-text", role: "alert", hidden: true });
  root.replaceChildren(statusLine, linkNote, jump, form, generalError, modes, staleNote, out);
  const controls = {};   // name -> {set(value), setError(text), setEnabled(ok, why)}

  function fieldRow(p, input, extra) {
    const id = "lab-" + p.name;
    input.id = input.id || id;
    const error = el("span", { class: "lab-field-error", id: id + "-error", "aria-live": "polite" });
    const why = el("span", { class: "lab-why", id: id + "-why" });
    const unit = p.unit && p.kind !== "size" ? ` (${p.unit})` : p.kind === "size" ? " (bytes)" : "";
    const row = el("div", { class: "lab-field", "data-param": p.name },
      el("label", { for: input.id, text: p.name + unit }), extra || input,
      el("span", { class: "lab-help", text: p.help + (p.kind === "size" || p.kind === "int" ? `; ${p.allowed}` : "") }),
      why, error);
    input.setAttribute("aria-describedby", id + "-error " + id + "-why");
    return { row, error, why };
  }

  function sizeOrIntControl(p) {
    const text = el("input", { type: "text", inputmode: "text", spellcheck: "false", autocomplete: "off",
                               class: "lab-text", size: "10" });
    const lo = p.lo, hi = p.hi === null ? 64 * MI * 64 : p.hi;
    const slider = el("input", { type: "range", class: "lab-slider", "aria-label": p.name });
    const pow2 = p.power_of_two;
    if (pow2) { slider.min = Math.log2(lo); slider.max = Math.log2(hi); slider.step = 1; }
    else if (p.log_scale) { slider.min = toPos(lo); slider.max = toPos(hi); slider.step = 1; }
    else { slider.min = lo; slider.max = Math.min(hi, 1e6); slider.step = 1; }
    const fromSlider = (v) => (pow2 ? 2 ** Number(v) : p.log_scale ? Math.min(hi, Math.max(lo, fromPos(Number(v)))) : Number(v));
    const toSlider = (n) => (pow2 ? Math.round(Math.log2(n)) : p.log_scale ? toPos(n) : n);
    const fmt = (n) => (p.kind === "size" ? fmtExact(n) : p.unit ? `${n} ${p.unit}` : String(n));
    const optional = p.optional ? el("input", { type: "checkbox", class: "lab-default",
                                                id: `lab-${p.name}-default` }) : null;
    const wrap = el("span", { class: "lab-size" }, slider, text,
      optional ? el("label", { class: "lab-default-label", for: optional.id },
                    optional, " default: " + p.default_text) : null);
    const { row, error, why } = fieldRow(p, text, wrap);
    const showSlider = (n) => {
      slider.value = toSlider(n);
      slider.setAttribute("aria-valuetext", fmt(n));
    };
    slider.addEventListener("input", () => {
      const n = fromSlider(slider.value);
      text.value = p.kind === "size" ? sizeText(n) : String(n);
      slider.setAttribute("aria-valuetext", fmt(n));
      change(p.name, p.kind === "size" ? sizeText(n) : n);
    });
    const commit = () => { if (!optional || !optional.checked) change(p.name, text.value.trim()); };
    text.addEventListener("change", commit);
    text.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); commit(); } });
    if (optional) {
      optional.addEventListener("change", async () => {
        text.disabled = slider.disabled = optional.checked;
        if (optional.checked) { text.value = ""; change(p.name, null); return; }
        // Unchecked: start from exactly the value the default stands for with the
        // settings as they are now (asked of the API, in order after any pending
        // change), not the slider's rounding or an earlier setting's default.
        text.value = "";
        if (!state.ready) return;
        let res;
        try { res = await call("check", configOf({ ...state.values, [p.name]: null })); } catch (e) { return; }
        if (optional.checked || text.value.trim()) return;            // the reader got there first
        if (res.ok && typeof res.params[p.name] === "number") {
          text.value = sizeText(res.params[p.name]);
          change(p.name, text.value);
        }
      });
    }
    return {
      row,
      set(v) {
        const isDefault = v === null || v === undefined;
        if (optional) { optional.checked = isDefault; text.disabled = slider.disabled = isDefault; }
        text.placeholder = isDefault ? "default" : "";
        if (isDefault) { text.value = ""; return; }
        text.value = typeof v === "number" && p.kind === "size" ? sizeText(v) : String(v);
      },
      resolved(n) {                                                 // the value the API read
        if (typeof n !== "number") return;
        showSlider(n);
        if (optional && optional.checked) text.placeholder = fmtSize(n);   // "default" is the box's label
      },
      setError(msg) { error.textContent = msg || ""; text.setAttribute("aria-invalid", msg ? "true" : "false"); },
      setEnabled(ok, reason) {
        text.disabled = slider.disabled = !ok || (optional && optional.checked);
        if (optional) optional.disabled = !ok;
        why.textContent = ok ? "" : "Does nothing here: " + reason;
        row.classList.toggle("lab-disabled", !ok);
      },
    };
  }

  function choiceControl(p) {
    const select = el("select", { class: "lab-select" });
    const options = p.kind === "tristate" ? [["", "default (" + p.default_text + ")"], ["true", "on"], ["false", "off"]]
      : p.choices.map((c) => [c, c + (p.name === "variant" ? ": " + SCHEMA.variants[c].split(":")[0] : "")]);
    for (const [value, label] of options) select.append(el("option", { value, text: label }));
    const { row, error, why } = fieldRow(p, select);
    select.addEventListener("change", () => {
      const v = select.value;
      change(p.name, p.kind === "tristate" ? (v === "" ? null : v === "true") : v);
    });
    return {
      row,
      set(v) { select.value = p.kind === "tristate" ? (v === null ? "" : String(v)) : v; },
      resolved() {},
      setError(msg) { error.textContent = msg || ""; select.setAttribute("aria-invalid", msg ? "true" : "false"); },
      setEnabled(ok, reason) {
        select.disabled = !ok;
        why.textContent = ok ? "" : "Does nothing here: " + reason;
        row.classList.toggle("lab-disabled", !ok);
      },
    };
  }

  function boolControl(p) {
    const box = el("input", { type: "checkbox", class: "lab-check" });
    const { row, error, why } = fieldRow(p, box);
    row.classList.add("lab-bool");
    box.addEventListener("change", () => change(p.name, box.checked));
    return {
      row,
      set(v) { box.checked = v === true; },
      resolved() {},
      setError(msg) { error.textContent = msg || ""; box.setAttribute("aria-invalid", msg ? "true" : "false"); },
      setEnabled(ok, reason) {
        box.disabled = !ok;
        why.textContent = ok ? "" : "Does nothing here: " + reason;
        row.classList.toggle("lab-disabled", !ok);
      },
    };
  }

  function seedControl(p) {
    const text = el("input", { type: "text", inputmode: "numeric", class: "lab-text", size: "8",
                               autocomplete: "off" });
    const { row, error, why } = fieldRow(p, text);
    const commit = () => change(p.name, text.value.trim());
    text.addEventListener("change", commit);
    text.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); commit(); } });
    return {
      row, resolved() {},
      set(v) { text.value = String(v); },
      setError(msg) { error.textContent = msg || ""; text.setAttribute("aria-invalid", msg ? "true" : "false"); },
      setEnabled(ok, reason) { text.disabled = !ok; why.textContent = ok ? "" : "Does nothing here: " + reason; },
    };
  }

  // Each group folds. On a phone only the first two start open, so that the
  // results are not 3,000 px below the top; a group opens itself when one of
  // its settings is changed by a link or has an error.
  const narrow = matchMedia("(max-width: 600px)").matches;
  const groupOf = {};     // parameter name -> {box, count}
  for (const [group, title] of GROUPS) {
    const members = PARAMS.filter((p) => p.group === group);
    if (!members.length) continue;
    const count = el("span", { class: "lab-group-count" });
    const fs = el("details", { class: "lab-group", "data-group": group,
                               open: !narrow || group === "kernel" || group === "workload" },
                  el("summary", {}, el("span", { class: "lab-group-title", text: title }), count));
    for (const p of members) groupOf[p.name] = { box: fs, count, members };
    for (const p of members) {
      const c = p.kind === "choice" || p.kind === "tristate" ? choiceControl(p)
        : p.kind === "bool" ? boolControl(p)
        : p.name === "seed" ? seedControl(p) : sizeOrIntControl(p);
      controls[p.name] = c;
      fs.append(c.row);
    }
    form.append(fs);
  }

  // ---- input, validation ------------------------------------------------------------------------
  let debounce = null;
  function change(name, value) {
    linkNote.hidden = true;      // the address now says what the lab uses
    state.values[name] = value;
    state.generation++;          // what is running now no longer matches the settings
    refreshEnabled();
    writeHash();
    clearTimeout(debounce);
    debounce = setTimeout(onInput, 200);
  }
  function refreshEnabled() {
    showCounts();
    for (const p of PARAMS) {
      const ok = applies(p, state.values);
      controls[p.name].setEnabled(ok, p.applies.reason);
    }
  }
  function setAll() {
    for (const p of PARAMS) controls[p.name].set(state.values[p.name]);
    refreshEnabled();
    for (const p of PARAMS) if (isChanged(p)) groupOf[p.name].box.open = true;
  }
  const isChanged = (p) => state.values[p.name] !== p.default && String(state.values[p.name]) !== String(p.default);
  // "2 changed" beside a group's title, so a folded group still says what it holds.
  function showCounts() {
    for (const { count, members } of new Set(Object.values(groupOf))) {
      const n = members.filter(isChanged).length;
      count.textContent = n ? ` · ${n} changed` : "";
    }
  }

  let lastValid = null;
  async function onInput() {
    if (!state.ready) return;
    const config = configOf(state.values);
    let checked;
    try { checked = await fresh("check", config); } catch (e) { failed(e); return; }
    for (const p of PARAMS) controls[p.name].setError("");
    generalError.textContent = "";
    setValid(checked.ok);
    if (!checked.ok) {
      showError(checked);
      return;
    }
    markStale(false);
    for (const p of PARAMS) controls[p.name].resolved(checked.params[p.name]);
    // A value that reads as the default ("256K" for buffer) is the default: not
    // "changed", and not in the address.
    for (const p of PARAMS) {
      if (p.default !== null && state.values[p.name] !== p.default && checked.params[p.name] === p.default) {
        state.values[p.name] = p.default;
      }
    }
    showCounts();
    writeHash();
    lastValid = { config: configOf(state.values), checked };
    summary.textContent = checked.derived.summary;
    if (state.mode === "run") runNow();
    // Elsewhere only an error leaves the status line: "Sweep stopped: ..." stays.
    else if (statusLine.classList.contains("lab-error")) status("Settings checked: ready.", false);
    if (state.mode === "problems" && !problem && state.qseed) showProblem();
  }
  // Settings with an error run nothing: Run, Sweep and "Use as A/B" wait for a valid set.
  let valid = true;
  function setValid(ok) {
    valid = ok;
    for (const b of [runButton, sweepButton, useA, useB]) b.disabled = !ok;
  }
  // Every field that is wrong on its own is flagged, and the rule run() names first.
  function showError(res) {
    const flagged = new Set();
    for (const f of res.fields || []) {
      if (controls[f.param]) { controls[f.param].setError(f.message); flagged.add(f.param); }
    }
    if (res.param && controls[res.param]) { if (!flagged.has(res.param)) controls[res.param].setError(res.message); }
    else generalError.textContent = res.message;
    if (res.param && groupOf[res.param]) flagged.add(res.param);
    for (const name of flagged) if (groupOf[name]) groupOf[name].box.open = true;
    const more = flagged.size > 1 ? ` (${flagged.size} settings need a change)` : "";
    status("Not run: " + res.message + more, false, true);
    markStale(true);
  }
  // Results that no longer match the settings are dimmed and say so.
  function markStale(stale) {
    out.classList.toggle("lab-stale", stale);
    staleNote.hidden = !stale;
  }

  await nextTask();
  // ---- the three modes ----------------------------------------------------------------------------
  const panels = {};
  for (const [mode, label] of [["run", "One run"], ["compare", "Compare A and B"], ["sweep", "Sweep the payload"],
                                ["problems", "Problems"]]) {
    const tab = el("button", { type: "button", role: "tab", class: "lab-tab", "data-mode": mode, text: label,
                               id: `lab-tab-${mode}`, "aria-controls": `lab-panel-${mode}`,
                               onclick: () => selectMode(mode) });
    modes.append(tab);
    panels[mode] = el("div", { class: "lab-panel", role: "tabpanel", "data-mode": mode, id: `lab-panel-${mode}`,
                               "aria-labelledby": `lab-tab-${mode}` });
    out.append(panels[mode]);
  }
  function selectMode(mode) { state.mode = mode; writeHash(); showMode(); onInput(); }
  // A tab list: arrows, Home and End move between the modes; Tab goes to the panel.
  modes.addEventListener("keydown", (e) => {
    const tabs = [...modes.children], i = tabs.indexOf(document.activeElement);
    if (i < 0) return;
    const j = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
    if (j === undefined) return;
    e.preventDefault();
    const next = tabs[(j + tabs.length) % tabs.length];
    next.focus();
    selectMode(next.dataset.mode);
  });
  function showMode() {
    for (const tab of modes.children) {
      const selected = tab.dataset.mode === state.mode;
      tab.setAttribute("aria-selected", String(selected));
      tab.tabIndex = selected ? 0 : -1;
    }
    for (const [mode, panel] of Object.entries(panels)) panel.hidden = mode !== state.mode;
  }

  // Run
  const summary = el("p", { class: "lab-summary" });
  const runButton = el("button", { type: "button", class: "lab-button", text: "Run", onclick: () => runNow() });
  const provenance = el("p", { class: "lab-provenance" });
  const headline = el("table", { class: "lab-headline" });
  const workerChart = el("div", { class: "lab-chart", "data-chart": "worker_time" });
  const workerText = el("p", { class: "lab-alt" });
  const commands = el("div", { class: "lab-commands" });
  const timelineBox = el("details", { class: "lab-timeline" },
    el("summary", { text: "Who holds the socket lock: a timeline from the run's trace" }));
  const timelineChart = el("div", { class: "lab-chart", "data-chart": "timeline" });
  const timelineSlider = el("input", { type: "range", class: "lab-slider", min: "0", max: "0", step: "any",
                                       "aria-label": "timeline window start (µs)" });
  const timelineText = el("p", { class: "lab-alt" });
  const timelineWindow = el("output", { class: "lab-window-value", for: "lab-timeline-window" });
  timelineSlider.id = "lab-timeline-window";
  const windowText = (t0, span) => `${t0.toFixed(0)} µs to ${(t0 + span).toFixed(0)} µs`;
  timelineBox.append(el("label", { class: "lab-window" }, "window start (µs) ", timelineSlider, timelineWindow),
                     timelineChart, timelineText);
  panels.run.append(summary, runButton, provenance, headline, el("h4", { text: "The RX worker's time" }),
                    workerChart, workerText, timelineBox, commands);

  function commandBlock(cmd) {
    const block = (label, text) => {
      const code = el("code", { text });
      const button = el("button", { type: "button", class: "lab-copy", text: "Copy",
        "aria-label": "Copy the " + label,
        onclick: () => copy(text, button) });
      return el("div", { class: "lab-command" }, el("span", { class: "lab-command-label", text: label }),
                el("pre", {}, code), button);
    };
    commands.replaceChildren(el("h4", { text: "Reproduce it at home" }),
      block("command line", cmd.cli), block("Python", cmd.python));
  }
  function copy(text, button) {
    const done = () => { button.textContent = "Copied"; setTimeout(() => { button.textContent = "Copy"; }, 1500); };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, () => {});
    root.dataset.copied = text;
    done();
  }

  function renderRun(res, live) {
    headline.replaceChildren(...res.headline.map((r) => el("tr", { "data-key": r.key },
      el("th", { scope: "row", text: r.label }), el("td", { text: r.text + (r.unit && r.text !== "-" ? " " + r.unit : "") }))));
    headline.append(el("tr", { "data-key": "vhost_no_rx_buf" },
      el("th", { scope: "row", text: "vhost waiting for guest RX buffers" }),
      el("td", { text: (100 * res.vhost_no_rx_buf).toFixed(0) + " % of the run" })));
    const linked = Object.keys(configOf(state.values)).length > 0;
    provenance.textContent = live
      ? `Live: computed in your browser in ${res.elapsed_ms.toFixed(0)} ms.`
      : linked ? "Precomputed with CPython for the default settings, not this link's: the live lab runs the link's settings once Python has loaded."
      : "Precomputed with CPython when the book was built (the default settings). The live lab takes over once Python has loaded.";
    provenance.dataset.live = live ? "true" : "false";
    draw(workerChart, res.charts.worker_time);
    workerText.textContent = res.charts.worker_time.description;
    commandBlock(res.command);
    root.dataset.lastRun = JSON.stringify(res.result);
  }

  async function runNow() {
    if (!state.ready || !lastValid) return;
    status("Running…", true);
    let res;
    try { res = await fresh("run", lastValid.config); } catch (e) { failed(e); return; }
    if (!res.ok) { showError(res); return; }
    renderRun(res, true);
    status(`Ran in ${res.elapsed_ms.toFixed(0)} ms.`, false);
    if (timelineBox.open) drawTimeline(null);
  }

  // The timeline's window stays where the reader put it while the settings stay
  // the same; new settings start at the run's busiest window.
  let timelineKey = null, timelineT0 = null;
  async function drawTimeline(t0) {
    if (!state.ready || !lastValid) return;
    const key = JSON.stringify(lastValid.config);
    if (t0 === null && key === timelineKey) t0 = timelineT0;
    let res;
    try { res = await fresh("timeline", lastValid.config, t0); } catch (e) { failed(e); return; }
    if (!res.ok) { showError(res); return; }
    timelineKey = key;
    timelineT0 = res.t0_us;
    timelineSlider.max = Math.max(0, res.end_us - res.span_us);
    timelineSlider.value = res.t0_us;
    timelineSlider.dataset.span = String(res.span_us);
    timelineSlider.setAttribute("aria-valuetext", windowText(res.t0_us, res.span_us));
    timelineWindow.textContent = windowText(res.t0_us, res.span_us);
    draw(timelineChart, res.spec);
    timelineText.textContent = res.text + (res.truncated ? " (The trace was cut short: only the run's first events are shown.)" : "");
  }
  timelineBox.addEventListener("toggle", () => { if (timelineBox.open) drawTimeline(null); });
  let timelineDebounce = null;
  timelineSlider.addEventListener("input", () => {
    timelineT0 = Number(timelineSlider.value);      // where the reader wants it, from now on
    timelineWindow.textContent = windowText(timelineT0, Number(timelineSlider.dataset.span || 0));
    clearTimeout(timelineDebounce);
    timelineDebounce = setTimeout(() => drawTimeline(Number(timelineSlider.value)), 60);
  });

  // Compare
  const abSummary = el("div", { class: "lab-ab" });
  const nSelect = el("select", { id: "lab-pairs", class: "lab-select" });
  const [nLo, nHi, nDefault] = SCHEMA.compare_replications;
  for (let n = nLo; n <= nHi; n++) nSelect.append(el("option", { value: String(n), text: String(n), selected: n === nDefault }));
  nSelect.addEventListener("change", () => { state.pairs = nSelect.value; writeHash(); });
  const compareButton = el("button", { type: "button", class: "lab-button", text: "Compare", onclick: () => compareNow() });
  const compareChart = el("div", { class: "lab-chart", "data-chart": "compare" });
  const compareText = el("p", { class: "lab-alt" });
  const compareResult = el("p", { class: "lab-change" });
  const compareCommands = el("div", { class: "lab-commands" });
  const useA = el("button", { type: "button", class: "lab-button", text: "Use as A", onclick: () => setSide("a") });
  const useB = el("button", { type: "button", class: "lab-button", text: "Use as B", onclick: () => setSide("b") });
  panels.compare.append(
    el("p", { text: "Set the controls and press “Use as A”; change them and press “Use as B”. Both run with the same seeds, one pair per seed, as the series ran its AB/BA pairs." }),
    el("div", { class: "lab-row" },
      useA, useB,
      el("label", { for: "lab-pairs" }, "pairs (seeds) ", nSelect), compareButton),
    abSummary, compareResult, compareChart, compareText, compareCommands);
  function describeSide(cfg) {
    const keys = Object.keys(cfg);
    return keys.length ? keys.map((k) => `${k}=${cfg[k]}`).join(", ") : "all defaults (baseline)";
  }
  function setSide(side) {
    if (!valid) return;
    state[side] = configOf(state.values);   // a default typed as text was made the default when checked
    if (side === "b") delete state.b.seed;       // the pairs use A's seeds
    writeHash();
    showSides();
  }
  function showSides() {
    abSummary.replaceChildren(
      el("p", { "data-side": "a" }, el("strong", { text: "A: " }), state.a ? describeSide(state.a) : "not set"),
      el("p", { "data-side": "b" }, el("strong", { text: "B: " }), state.b ? describeSide(state.b) + " (with A's seeds)" : "not set"));
    compareButton.disabled = !(state.a && state.b);
  }
  let compareSeq = 0;
  async function compareNow() {
    if (!state.ready || !state.a || !state.b) return;
    const n = Number(nSelect.value);
    status(`Comparing: ${2 * n} runs…`, true);
    const mine = ++compareSeq;
    compareResult.textContent = "";
    let res;
    try { res = await callAt(null, "compare", state.a, state.b, n); } catch (e) { failed(e); return; }
    if (mine !== compareSeq) return;               // a newer compare was asked for
    if (!res.ok) { status(res.message, false, true); return; }
    const [lo, hi] = res.change_ci;
    const sign = (x) => (x >= 0 ? "+" : "") + x.toFixed(1);
    compareResult.textContent = `B against A: ${sign(res.change_pct)} % (95 % interval ${sign(lo)} % to ${sign(hi)} %), over ${n} pairs.`;
    compareResult.dataset.change = String(res.change_pct);
    draw(compareChart, res.chart);
    compareText.textContent = res.text;
    compareCommands.replaceChildren(el("h4", { text: "Reproduce it at home" }),
      ...[["command line", res.command.cli], ["Python", res.command.python]].map(([label, text]) => {
        const button = el("button", { type: "button", class: "lab-copy", text: "Copy", "aria-label": "Copy the " + label, onclick: () => copy(text, button) });
        return el("div", { class: "lab-command" }, el("span", { class: "lab-command-label", text: label }), el("pre", {}, el("code", { text })), button);
      }));
    status("Compared.", false);
  }

  // Sweep
  const matchedBox = el("input", { type: "checkbox", id: "lab-matched" });
  const changeBox = el("input", { type: "checkbox", id: "lab-sweep-change" });
  const sweepButton = el("button", { type: "button", class: "lab-button", text: "Sweep", onclick: () => sweepNow() });
  const sweepChart = el("div", { class: "lab-chart", "data-chart": "sweep" });
  const sweepText = el("p", { class: "lab-alt" });
  const sweepNote = el("p", { class: "lab-note", "data-note": "sweep" });
  const sweepProgress = el("progress", { max: String(SCHEMA.sweep_payloads.length), value: "0", class: "lab-progress" });
  panels.sweep.append(
    el("p", { text: `Runs the current settings at ${SCHEMA.sweep_payloads.length} payloads from 64 B to 64 KiB, each with its default length. Where the settings are the series' test bed, its measurements are drawn too.` }),
    el("div", { class: "lab-row" },
      el("label", { for: "lab-matched" }, matchedBox, " recv() size follows the payload (the series' fixed-syscall test)"),
      el("label", { for: "lab-sweep-change" }, changeBox, " the change from A to B (set them under “Compare”)"),
      sweepButton, sweepProgress),
    sweepNote, sweepChart, sweepText);
  matchedBox.addEventListener("change", () => { state.matched = matchedBox.checked; state.generation++; writeHash(); });
  changeBox.addEventListener("change", () => { state.generation++; });
  let sweepSeq = 0;
  function sweepStopped(mine) {
    if (mine !== sweepSeq) return;               // a newer sweep took over: it speaks for itself
    root.dataset.sweepDone = "stopped";
    status("Sweep stopped: the settings changed. Press Sweep to draw it again.", false);
  }

  async function sweepNow() {
    if (!state.ready || !lastValid || !valid) return;
    const useAB = changeBox.checked && state.a && state.b;
    const base = useAB ? state.a : lastValid.config, other = useAB ? state.b : null;
    const matched = matchedBox.checked;
    const generation = ++state.generation;     // a new sweep supersedes any other call
    const mine = ++sweepSeq;
    const points = [];
    sweepProgress.value = 0;
    root.dataset.sweepDone = "false";
    root.dataset.sweepPoints = "0";
    for (const payload of SCHEMA.sweep_payloads) {
      if (generation !== state.generation) return sweepStopped(mine);   // the input changed
      status(`Sweeping: ${fmtSize(payload)}…`, true);
      let pt;
      try { pt = await call("sweep_point", base, payload, matched, other); } catch (e) { failed(e); return; }
      if (generation !== state.generation) return sweepStopped(mine);
      if (pt.ok) points.push({ payload: pt.payload, value: pt.value });
      let chart;
      try { chart = await call("sweep_chart", base, points, matched, other); } catch (e) { failed(e); return; }
      if (generation !== state.generation) return sweepStopped(mine);
      draw(sweepChart, chart.spec);
      sweepText.textContent = chart.text;
      sweepNote.textContent = chart.note || "";
      sweepProgress.value = points.length;
      root.dataset.sweepPoints = String(points.length);
    }
    root.dataset.sweepDone = "true";
    status(`Swept ${points.length} payloads.`, false);
  }

  // A call that failed for a reason other than being superseded: say so.
  function failed(e) {
    if (e.message !== "stale" && e.message !== "cancelled") status("Failed: " + e.message, false, true);
  }

  // Problems: the same seeded problems as `python -m vsockmodel quiz`
  const qChapter = el("select", { id: "lab-qchapter", class: "lab-select" });
  for (const n of SCHEMA.quiz_chapters) qChapter.append(el("option", { value: String(n), text: "Chapter " + n }));
  const qSeed = el("input", { id: "lab-qseed", type: "text", inputmode: "numeric", class: "lab-text", size: "8",
                              autocomplete: "off" });
  const qShow = el("button", { type: "button", class: "lab-button", text: "Show the problem", onclick: () => showProblem() });
  const qQuestion = el("p", { class: "lab-question", "aria-live": "polite" });
  const qAnswer = el("input", { id: "lab-qanswer", type: "text", class: "lab-text", size: "14", autocomplete: "off" });
  const qCheck = el("button", { type: "button", class: "lab-button", text: "Check my answer", onclick: () => checkAnswer() });
  const qResult = el("p", { class: "lab-change", role: "status" });
  const qError = el("p", { id: "lab-qerror", class: "lab-error-text", role: "alert" });
  const qOpen = el("button", { type: "button", class: "lab-button", text: "Open its settings in the lab",
                               onclick: () => openProblemSettings() });
  const qCommand = el("div", { class: "lab-commands" });
  panels.problems.append(
    el("p", { text: "A chapter and a seed pick a problem, and the model computes its answer: the same problem as "
                    + "python -m vsockmodel quiz --chapter N --seed S gives. Predict first, then check." }),
    el("div", { class: "lab-row" }, el("label", { for: "lab-qchapter", text: "chapter " }), qChapter,
       el("label", { for: "lab-qseed", text: "seed " }), qSeed, qShow),
    qError, qQuestion,
    el("div", { class: "lab-row" }, el("label", { for: "lab-qanswer", text: "your answer " }), qAnswer, qCheck, qOpen),
    qResult, qCommand);
  qChapter.value = state.qchapter || "1";
  qSeed.value = state.qseed || "1";
  qAnswer.addEventListener("keydown", (e) => { if (e.key === "Enter") { e.preventDefault(); checkAnswer(); } });
  let problem = null;
  async function showProblem() {
    if (!state.ready) return;
    state.qchapter = qChapter.value;
    state.qseed = qSeed.value.trim();
    writeHash();
    qError.textContent = qResult.textContent = "";
    problem = null;
    root.dataset.problem = "";
    status("Computing the problem's answer…", true);
    let res;
    try { res = await call("quiz_problem", state.qchapter, state.qseed); } catch (e) { failed(e); return; }
    status("", false);
    if (!res.ok) { qError.textContent = res.message; qQuestion.textContent = ""; return; }
    problem = res.problem;
    qQuestion.textContent = problem.question;
    qAnswer.placeholder = problem.yes_no ? "yes or no" : (problem.unit || "a number");
    qCommand.replaceChildren(el("h4", { text: "The same problem at home" }),
      el("div", { class: "lab-command" }, el("pre", {}, el("code", { text: res.command + " -c" }))));
    root.dataset.problem = JSON.stringify(problem);
  }
  async function checkAnswer() {
    if (!state.ready || !problem) return;
    let res;
    try { res = await call("quiz_check", problem.chapter, problem.seed, qAnswer.value); } catch (e) { failed(e); return; }
    if (!res.ok) { qError.textContent = res.message; return; }
    qError.textContent = "";
    qResult.textContent = (res.correct ? "Right. " : "Not quite. ") + "The model says " + res.answer_text
      + (problem.yes_no ? "" : " (" + res.tolerance_text + " counts as right)") + ". " + res.explanation;
    qResult.dataset.correct = String(res.correct);
  }
  function openProblemSettings() {
    if (!problem) return;
    for (const p of PARAMS) state.values[p.name] = p.default;
    Object.assign(state.values, problem.settings);
    state.mode = "run";
    setAll();
    writeHash();
    showMode();
    state.generation++;
    onInput();
  }

  await nextTask();
  // ---- drawing --------------------------------------------------------------------------------------
  // Figures are drawn by a second worker (lab-render.js: Vega) into SVG text;
  // the page only inserts it, so drawing never blocks the main thread.
  const renderer = location.protocol === "file:" ? null : new Worker(STATIC + "lab/lab-render.js");
  const drawing = new Map();      // id -> container
  let drawId = 0;
  if (renderer) {
    renderer.onmessage = (event) => {
      const { id, svg, error } = event.data;
      const container = drawing.get(id);
      drawing.delete(id);
      if (!container || Number(container.dataset.drawId) !== id) return;   // a newer drawing is coming
      if (error) { container.textContent = "(figure not drawn: " + error + ")"; return; }
      container.innerHTML = svg;
      const figure = container.querySelector("svg");
      if (figure) {
        figure.setAttribute("role", "img");
        figure.setAttribute("aria-label", JSON.parse(container.dataset.spec).description);
      }
      container.dataset.drawn = "true";
    };
  }
  function draw(container, spec) {
    container.dataset.spec = JSON.stringify(spec);
    if (!renderer) return;
    const id = ++drawId;
    container.dataset.drawId = String(id);
    drawing.set(id, container);
    renderer.postMessage({ id, spec, width: container.clientWidth || 600,
                           theme: SCHEMA.themes[darkMode() ? "dark" : "light"] });
  }
  const redrawAll = () => {
    for (const c of root.querySelectorAll(".lab-chart[data-spec]")) draw(c, JSON.parse(c.dataset.spec));
  };
  new MutationObserver(redrawAll).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  let resizeTimer = null;
  let lastWidth = root.clientWidth;
  new ResizeObserver(() => {
    if (root.clientWidth === lastWidth) return;
    lastWidth = root.clientWidth;
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(redrawAll, 200);
  }).observe(root);

  // ---- start ------------------------------------------------------------------------------------------
  readHash();
  if (linkProblems.length) {
    linkNote.replaceChildren(el("strong", { text: "This link has settings the lab cannot use: " }),
                             linkProblems.join("; ") + ".");
    linkNote.hidden = false;
    writeHash();                 // the address keeps only what the lab used
  }
  setAll();
  qChapter.value = state.qchapter || "1";     // a link's #qchapter=..&qseed=.. (the panel was built before readHash)
  if (state.pairs) nSelect.value = state.pairs;   // a link's #pairs=..
  qSeed.value = state.qseed || "1";
  showMode();
  showSides();
  matchedBox.checked = !!state.matched;
  await nextTask();
  renderRun(DATA.precomputed.run, false);
  summary.textContent = DATA.precomputed.run.derived.summary;
  await nextTask();
  if (location.protocol === "file:") {
    status("The live lab needs a local web server (browsers block its Python runtime on file:// pages): "
           + "run  python3 -m http.server --directory _build/html 8000  and open http://localhost:8000/book/lab.html",
           false, true);
    root.dataset.fileProtocol = "true";
  } else {
    startWorker();
  }
  // For tests and the curious: the live lab's calls.
  window.vsockLab = { call: (fn, ...args) => call(fn, ...args), state, ready: () => state.ready };
})();
