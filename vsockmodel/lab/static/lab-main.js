// The browser lab: the vsockmodel simulator, live in the page.
//
// This module holds the settings, the status line and the modes together:
// controls.js builds the controls from the schema, address.js keeps the
// settings in the address, worker-client.js talks to Python (Pyodide in a
// worker), drawing.js draws figures in a second worker, and each mode
// (mode-*.js) is a module of its own. Python checks every value, runs the
// model, builds every figure and formats every number; this code shows it.
//
// The page is built in several short tasks (each `await nextTask()` lets the
// browser paint and answer input), so it never stops responding for long.

import { MODES, applies, configOf as configFrom, isChanged, readAddress, writeAddress } from "./address.js";
import { buildControls } from "./controls.js";
import { commandBlock, el, nextTask } from "./dom.js";
import { Drawing } from "./drawing.js";
import { LabWorker } from "./worker-client.js";
import { createRunMode } from "./mode-run.js";
import { createCompareMode } from "./mode-compare.js";
import { createSweepMode } from "./mode-sweep.js";
import { createHeadlineMode } from "./mode-headline.js";
import { createTimelinesMode } from "./mode-timelines.js";
import { createProblemsMode } from "./mode-problems.js";
import { createPythonMode } from "./mode-python.js";

const STALE_KILL_MS = 2000;     // a superseded call still running after this: restart the worker
const STOP_AFTER_MS = 400;      // a call running this long gets a Stop button
const MODE_LABELS = { run: "One run", compare: "Compare A/B", sweep: "Sweep", headline: "Headline",
                      timelines: "Timelines A|B", problems: "Problems", python: "Python" };
const MODE_FACTORIES = { run: createRunMode, compare: createCompareMode, sweep: createSweepMode,
                         headline: createHeadlineMode, timelines: createTimelinesMode,
                         problems: createProblemsMode, python: createPythonMode };

// early: the worker lab.js started (Python loads while these modules load).
export async function start(root, DATA, STATIC, early = null) {
  const SCHEMA = DATA.schema, PAGE = DATA.page;
  const PARAMS = SCHEMA.parameters.filter((p) => p.name !== "trace");
  const configOf = (values) => configFrom(values, PARAMS);
  let { state, problems: linkProblems } = readAddress(location.hash, PARAMS, PAGE);
  state.generation = 0;
  state.ready = false;

  // ---- the skeleton: status, settings, results -----------------------------------------
  const statusText = el("span", { class: "lab-status-text" });
  const stopButton = el("button", { type: "button", class: "lab-button lab-stop", text: "Stop", hidden: true });
  const statusLine = el("p", { class: "lab-status", role: "status", "aria-live": "polite" }, statusText, stopButton);
  function status(text, busy, error) {
    statusText.textContent = text;
    statusLine.classList.toggle("lab-busy", !!busy);
    statusLine.classList.toggle("lab-error", !!error);
  }
  const linkNote = el("p", { class: "lab-link-note lab-error-text", role: "alert", hidden: true });
  const form = el("form", { class: "lab-controls", "aria-label": "Settings", onsubmit: (e) => e.preventDefault() });
  const generalError = el("p", { class: "lab-error-text", role: "alert" });
  const modes = el("div", { class: "lab-modes", role: "tablist", "aria-label": "What to do" });
  const out = el("section", { class: "lab-output", "aria-label": "Results", id: "lab-results" });
  const staleNote = el("p", { class: "lab-stale-note", hidden: true,
    text: "The settings have an error, so nothing was run: the results below are from earlier settings." });
  // The common settings first, then the results, then every other setting: the
  // results are on the first screen (beside the settings where the page is wide).
  const commonSlot = el("div", { class: "lab-common-slot" });
  const moreSettings = el("div", { class: "lab-more-settings" },
                          el("h3", { class: "lab-more-title", text: "More settings" }), form, generalError);
  const resultsColumn = el("div", { class: "lab-results-column" }, modes, staleNote, out);
  root.replaceChildren(statusLine, linkNote, el("div", { class: "lab-body" }, commonSlot, resultsColumn, moreSettings));
  await nextTask();

  // ---- Python ----------------------------------------------------------------------------
  let stopTimer = null;
  const worker = new LabWorker(STATIC + "lab/lab-worker.js",
    { pyodide: STATIC + "vendor/pyodide/", wheels: DATA.wheels.map((w) => STATIC + "lab/" + w) }, {
      progress: (text) => status(text, true),
      ready: (m) => {
        state.ready = true;
        root.dataset.ready = "true";
        root.dataset.readyPhases = JSON.stringify(m.phases);
        status(`Live: Python ${m.python} in your browser, ready in ${(m.ms / 1000).toFixed(1)} s.`, false);
        if (built) afterReady();
      },
      failed: (text) => status(text, false, true),
      busy: (busy) => {
        clearTimeout(stopTimer);
        if (!busy) { stopButton.hidden = true; return; }
        stopTimer = setTimeout(() => { stopButton.hidden = !worker.busy(); }, STOP_AFTER_MS);
      },
    });
  // Python loads while the page builds the rest: whichever ends last goes on.
  let built = false;
  const modeObjects = {};
  function afterReady() {
    onInput();
    for (const mode of Object.values(modeObjects)) mode.onReady?.();
  }
  function stopWorker(reason) {
    state.ready = false;
    delete root.dataset.ready;
    const jobs = worker.stop(reason);
    for (const mode of Object.values(modeObjects)) mode.onStopped?.(jobs, reason);
  }
  // After Stop, the fresh Python does not run the same settings again by itself.
  let holdRun = false;
  stopButton.addEventListener("click", () => {
    holdRun = true;
    stopWorker("stopped");
    status("Stopped. Starting a fresh Python…", true);
  });
  function call(fn, ...args) {
    if (!state.ready) return Promise.reject(new Error("not ready"));
    return worker.callWith({ generation: state.generation }, fn, ...args);
  }
  // A call with inputs of its own (compare's A and B): changing the controls does not make it stale.
  function callOwn(fn, meta, ...args) {
    if (!state.ready) return Promise.reject(new Error("not ready"));
    return worker.callWith({ generation: null, ...meta }, fn, ...args);
  }
  // A call whose result is wanted only if the settings have not changed meanwhile.
  async function fresh(fn, ...args) {
    const generation = state.generation;
    const value = await call(fn, ...args);
    if (generation !== state.generation) throw new Error("stale");
    return value;
  }
  setInterval(() => {
    const now = performance.now();
    for (const job of worker.pending.values()) {
      if (job.generation !== null && job.generation !== state.generation && now - job.started > STALE_KILL_MS) {
        stopWorker("cancelled");
        status("Stopping a run that no longer matches the settings…", true);
        return;
      }
    }
  }, 250);
  // A call that failed for a reason other than being superseded or stopped: say so.
  function failed(e) {
    if (!["stale", "cancelled", "stopped", "not ready"].includes(e.message)) status("Failed: " + e.message, false, true);
  }

  worker.start(early);

  // ---- the controls ---------------------------------------------------------------------------
  const narrow = matchMedia("(max-width: 600px)").matches;
  const { controls, groups, common } = buildControls(form, PARAMS, SCHEMA, PAGE, {
    change,
    resolveDefault: async (name) => {
      let res;
      try { res = await call("check", configOf({ ...state.values, [name]: null })); } catch (e) { return null; }
      return res.ok && res.shown[name] ? res.shown[name].text : null;
    },
  }, narrow);
  commonSlot.append(common);
  const groupOf = {};
  for (const g of Object.values(groups)) for (const p of g.members) groupOf[p.name] = g;

  // Set in the same task that built them: no slider is ever shown apart from its box.
  setAll();

  let debounce = null;
  function change(name, value) {
    linkNote.hidden = true;      // the address now says what the lab uses
    holdRun = false;
    state.values[name] = value;
    state.generation++;          // what is running now no longer matches the settings
    refreshEnabled();
    writeAddress(state, PARAMS);
    clearTimeout(debounce);
    debounce = setTimeout(onInput, 200);
  }
  function refreshEnabled() {
    showCounts();
    for (const p of PARAMS) controls[p.name].setEnabled(applies(p, state.values), p.applies.reason);
  }
  // "2 changed" beside a group's title, so a folded group still says what it holds.
  function showCounts() {
    for (const { count, members } of Object.values(groups)) {
      const n = members.filter((p) => isChanged(p, state.values)).length;
      count.textContent = n ? ` · ${n} changed` : "";
    }
  }
  function setAll() {
    for (const p of PARAMS) controls[p.name].set(state.values[p.name]);
    refreshEnabled();
    for (const p of PARAMS) if (isChanged(p, state.values) && groupOf[p.name]) groupOf[p.name].box.open = true;
  }

  // ---- checking the settings ------------------------------------------------------------------
  let lastValid = null, valid = true;
  const needsValid = [];          // buttons that wait for valid settings
  async function onInput() {
    if (!state.ready) return;
    const config = configOf(state.values);
    let checked;
    const generation = state.generation;
    try { checked = await fresh("check", config); } catch (e) { failed(e); return; }
    root.dataset.settled = String(generation);     // these settings are checked (tests wait for it)
    for (const p of PARAMS) controls[p.name].setError("");
    generalError.textContent = "";
    setValid(checked.ok);
    if (!checked.ok) { showError(checked); return; }
    markStale(false);
    for (const p of PARAMS) controls[p.name].resolved(checked.params[p.name], checked.shown[p.name]);
    for (const name of ["transfer", "rx_buf_payload"]) {
      if (state.values[name] === null && checked.shown["derived." + name]) {
        controls[name].resolved(checked.derived[name === "transfer" ? "transfer" : "rx_buf_payload"],
                                checked.shown["derived." + name]);
      }
    }
    // A value that reads as the default ("256K" for buffer) is the default: not
    // "changed", and not in the address.
    for (const p of PARAMS) {
      if (p.default !== null && state.values[p.name] !== p.default && checked.params[p.name] === p.default) {
        state.values[p.name] = p.default;
      }
    }
    showCounts();
    writeAddress(state, PARAMS);
    lastValid = { config: configOf(state.values), checked };
    for (const mode of Object.values(modeObjects)) mode.onChecked?.(checked);
    if (state.mode === "run" && holdRun) { holdRun = false; status("Stopped: press Run to run these settings.", false); }
    else if (state.mode === "run") modeObjects.run.runNow();
    // Elsewhere only an error leaves the status line: "Sweep stopped: ..." stays.
    else if (statusLine.classList.contains("lab-error")) status("Settings checked: ready.", false);
    modeObjects[state.mode].onInput?.();
  }
  function setValid(ok) {
    valid = ok;
    for (const b of needsValid) b.disabled = !ok || b.dataset.busy === "true";
  }
  // Every field that is wrong on its own is flagged, and the rule run() names first.
  function showError(res) {
    const flagged = new Set();
    for (const f of res.fields || []) {
      if (controls[f.param]) { controls[f.param].setError(f.message); flagged.add(f.param); }
    }
    if (res.param && controls[res.param]) { if (!flagged.has(res.param)) controls[res.param].setError(res.message); }
    else generalError.textContent = res.message;
    if (res.param && controls[res.param]) flagged.add(res.param);
    for (const name of flagged) if (groupOf[name]) groupOf[name].box.open = true;
    const more = flagged.size > 1 ? ` (${flagged.size} settings need a change)` : "";
    status("Not run: " + res.message + more, false, true);
    markStale(true);
  }
  function markStale(stale) {
    out.classList.toggle("lab-stale", stale);
    staleNote.hidden = !stale;
  }

  // ---- the modes ---------------------------------------------------------------------------------
  const drawing = new Drawing(STATIC, SCHEMA.themes, root);
  const panels = {};
  const ctx = {
    root, DATA, SCHEMA, PAGE, PARAMS, state, el, status, failed, call, callOwn, fresh, configOf,
    draw: (c, spec) => drawing.draw(c, spec), clearDrawing: (c) => drawing.clear(c),
    commands: (container, heading, blocks) => commandBlock(root, container, heading, blocks),
    lastValid: () => lastValid, valid: () => valid, showError,
    needsValid: (button) => { needsValid.push(button); return button; },
    setBusy: (button, busy) => { button.dataset.busy = String(busy); button.disabled = busy || (needsValid.includes(button) && !valid); },
    writeAddress: () => writeAddress(state, PARAMS),
    openSettings: (values, mode) => {
      for (const p of PARAMS) state.values[p.name] = p.default;
      Object.assign(state.values, values);
      state.mode = mode;
      setAll();
      writeAddress(state, PARAMS);
      showMode();
      state.generation++;
      onInput();
    },
    stop: () => stopWorker("stopped"),
  };
  for (const mode of MODES) {
    const tab = el("button", { type: "button", role: "tab", class: "lab-tab", "data-mode": mode, text: MODE_LABELS[mode],
                               id: `lab-tab-${mode}`, "aria-controls": `lab-panel-${mode}`, onclick: () => selectMode(mode) });
    modes.append(tab);
    panels[mode] = el("div", { class: "lab-panel", role: "tabpanel", "data-mode": mode, id: `lab-panel-${mode}`,
                               "aria-labelledby": `lab-tab-${mode}` });
    out.append(panels[mode]);
    modeObjects[mode] = MODE_FACTORIES[mode]({ ...ctx, panel: panels[mode] });
    await nextTask();
  }
  function selectMode(mode) {
    state.mode = mode;
    writeAddress(state, PARAMS);
    showMode();
    onInput();
  }
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
    root.dataset.mode = state.mode;
    modeObjects[state.mode].onShow?.();
  }

  // ---- the address ------------------------------------------------------------------------------
  function applyAddress() {
    if (linkProblems.length) {
      linkNote.replaceChildren(el("strong", { text: "This link has settings the lab cannot use: " }),
                               linkProblems.join("; ") + ".");
      linkNote.hidden = false;
    } else linkNote.hidden = true;
    setAll();
    for (const mode of Object.values(modeObjects)) mode.onAddress?.();
    showMode();
    writeAddress(state, PARAMS);       // the address keeps only what the lab used
  }
  // The page follows the address: edited by hand, or a link followed on this page.
  window.addEventListener("hashchange", () => {
    const read = readAddress(location.hash, PARAMS, PAGE);
    Object.assign(state, read.state);
    linkProblems = read.problems;
    state.generation++;
    applyAddress();
    onInput();
  });

  applyAddress();
  await nextTask();
  modeObjects.run.showPrecomputed(Object.keys(configOf(state.values)).length > 0);
  built = true;
  if (state.ready) afterReady();
  // For tests and the curious: the live lab's calls, and a way back to a known state.
  window.vsockLab = {
    call: (fn, ...args) => call(fn, ...args), state, ready: () => state.ready,
    // Settings, mode and storage as a fresh page with this fragment would have them.
    pending: () => [...worker.pending.values()].map((job) => job.fn),
    settled: () => state.ready && root.dataset.settled === String(state.generation),
    async reset(hash = "") {
      try { localStorage.removeItem("vsock-lab-code"); } catch (e) { /* storage may be off */ }
      // Nothing of the last test runs on: a sweep stops at its next point; a call
      // still running a moment later ends with its worker.
      state.generation++;
      for (let waited = 0; worker.busy() && waited < 1500; waited += 50) await new Promise((r) => setTimeout(r, 50));
      if (worker.busy()) stopWorker("reset");
      for (const mode of Object.values(modeObjects)) mode.reset?.();
      history.replaceState(null, "", location.pathname + location.search + (hash || "#"));
      const read = readAddress(hash, PARAMS, PAGE);
      Object.assign(state, read.state);
      linkProblems = read.problems;
      state.generation++;
      applyAddress();
      onInput();
    },
  };
}
