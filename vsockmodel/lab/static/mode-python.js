// Python: the reader's own code against the same vsockmodel, in the lab's
// worker. What it prints appears as it prints it; an error shows its
// traceback through the reader's lines (vsockmodel.lab.pycode);
// vsockmodel.lab.show(...) draws with the lab's charts. Stop ends a run at
// once (a fresh worker). The code is kept in this browser (localStorage) and
// in the address, up to a size a link can carry. The editor (CodeMirror,
// bundled offline) is loaded only when this mode is first opened.

const STORAGE_KEY = "vsock-lab-code";

export function createPythonMode(ctx) {
  const { el, panel, state, root, PAGE } = ctx;
  const examples = el("select", { id: "lab-example", class: "lab-select", autocomplete: "off" });
  const byChapter = new Map();
  for (const e of PAGE.examples) {
    if (!byChapter.has(e.chapter)) byChapter.set(e.chapter, el("optgroup", { label: e.chapter_title }));
    byChapter.get(e.chapter).append(el("option", { value: e.key, text: e.title }));
  }
  examples.append(...byChapter.values());
  const load = el("button", { type: "button", class: "lab-button", text: "Load the example", onclick: () => loadExample(examples.value) });
  const runButton = el("button", { type: "button", class: "lab-button", text: "Run the code", onclick: () => runNow() });
  const stopButton = el("button", { type: "button", class: "lab-button", text: "Stop", disabled: true, onclick: () => stopNow() });
  const editorBox = el("div", { class: "lab-editor", "aria-label": "Python code" });
  const note = el("p", { class: "lab-note", "data-note": "python" });
  const output = el("pre", { class: "lab-output-text", "aria-live": "polite", "aria-label": "What the code printed" });
  const error = el("pre", { class: "lab-traceback", role: "alert" });
  const figures = el("div", { class: "lab-figures" });
  panel.append(
    el("p", { text: "Write Python against the model, as in a notebook at home: vsockmodel is imported; "
                    + "print() shows here, and vsockmodel.lab.show(x) draws a run, a comparison, a sweep or a list of "
                    + "(x, y) points (show(points, title, x=\"axis (unit)\", y=\"axis (unit)\")). Start from a chapter's example. Ctrl+Enter runs the code." }),
    el("div", { class: "lab-row" }, el("label", { for: "lab-example", text: "example " }), examples, load),
    editorBox, el("div", { class: "lab-row" }, runButton, stopButton), note, output, error, figures);

  let editor = null;            // {get(), set(code)}
  let pending = null;           // code to put in once the editor exists
  let seq = 0, running = false;

  function storedCode() {
    try { return localStorage.getItem(STORAGE_KEY); } catch (e) { return null; }
  }
  function keep(code) {
    try { localStorage.setItem(STORAGE_KEY, code); } catch (e) { /* storage may be off */ }
    if (code.length > PAGE.code_limit) {
      note.textContent = `This code is ${code.length.toLocaleString("en")} characters, more than the `
        + `${PAGE.code_limit.toLocaleString("en")} a link carries: it is kept in this browser, but the address `
        + "no longer holds it. Copy the code itself to share it.";
      state.code = null;
    } else {
      note.textContent = "";
      state.code = code;
    }
    if (state.mode === "python") ctx.writeAddress();
  }
  function firstCode() {
    return state.code ?? storedCode() ?? PAGE.examples.find((e) => e.key === PAGE.default_example).code;
  }

  async function ensureEditor() {
    if (editor) return editor;
    if (!ensureEditor.loading) ensureEditor.loading = buildEditor();
    return ensureEditor.loading;
  }
  async function buildEditor() {
    // The editor's two modules, then the editor: three tasks, none long.
    const later = () => new Promise((resolve) => setTimeout(resolve, 0));
    let cm = null;
    try {
      const core = await import(new URL("../vendor/codemirror/editor-core.js", import.meta.url).href);
      await later();
      cm = { ...core, ...await import(new URL("../vendor/codemirror/editor-python.js", import.meta.url).href) };
    } catch (e) { cm = null; }
    await later();
    const initial = pending ?? firstCode();
    pending = null;
    let changed = null;
    const onEdit = (code) => { clearTimeout(changed); changed = setTimeout(() => keep(code), 300); };
    if (cm) {
      const view = new cm.EditorView({
        parent: editorBox,
        state: cm.EditorState.create({
          doc: initial,
          extensions: [
            cm.lineNumbers(), cm.history(), cm.drawSelection(), cm.indentOnInput(), cm.bracketMatching(),
            cm.highlightActiveLine(), cm.syntaxHighlighting(cm.defaultHighlightStyle, { fallback: true }), cm.python(),
            cm.keymap.of([{ key: "Mod-Enter", run: () => { runNow(); return true; } },
                          ...cm.defaultKeymap, ...cm.historyKeymap, cm.indentWithTab]),
            cm.EditorView.contentAttributes.of({ "aria-label": "Python code", "aria-multiline": "true" }),
            cm.EditorView.updateListener.of((u) => { if (u.docChanged) onEdit(u.state.doc.toString()); }),
          ],
        }),
      });
      editor = {
        get: () => view.state.doc.toString(),
        set: (code) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: code } }),
      };
    } else {
      // The editor's file is missing: a plain text box does the same job.
      const area = el("textarea", { class: "lab-code-fallback", rows: "16", spellcheck: "false", "aria-label": "Python code" });
      area.value = initial;
      area.addEventListener("input", () => onEdit(area.value));
      area.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); runNow(); } });
      editorBox.append(area);
      editor = { get: () => area.value, set: (code) => { area.value = code; } };
    }
    root.dataset.editor = cm ? "codemirror" : "textarea";
    // For tests and the curious: the code in the editor.
    root.vsockPython = { get: () => editor.get(), set: (code) => { editor.set(code); keep(code); } };
    return editor;
  }

  async function loadExample(key) {
    const example = PAGE.examples.find((e) => e.key === key);
    if (!example) return;
    (await ensureEditor()).set(example.code);
    keep(example.code);
  }
  function setRunning(on) {
    running = on;
    runButton.disabled = on;
    stopButton.disabled = !on;
    if (on) root.dataset.python = "running";
  }
  async function runNow() {
    if (running) return;
    if (!ctx.state.ready) { note.textContent = "Python is still loading: run the code again in a moment."; return; }
    const mine = ++seq;
    output.textContent = error.textContent = "";
    figures.replaceChildren();
    setRunning(true);
    const code = (await ensureEditor()).get();
    keep(code);
    ctx.status("Running your code…", true);
    let res;
    try {
      res = await ctx.callOwn("run_code", { onOutput: (text) => { if (mine === seq) output.textContent += text; } }, code);
    } catch (e) {
      if (mine !== seq) return;
      setRunning(false);
      if (e.message === "stopped") {
        error.textContent = "Stopped: Python was ended and is starting afresh.";
        root.dataset.python = "stopped";
      } else ctx.failed(e);
      return;
    }
    if (mine !== seq) return;
    setRunning(false);
    error.textContent = res.error;
    for (const spec of res.figures) {
      const chart = el("div", { class: "lab-chart", "data-chart": "python" });
      figures.append(chart, el("p", { class: "lab-alt", text: spec.description }));
      ctx.draw(chart, spec);
    }
    root.dataset.python = res.ok ? "done" : "error";
    ctx.status(res.ok ? "Your code ran." : "Your code stopped with an error (below).", false, !res.ok);
  }
  function stopNow() {
    if (!running) return;
    ctx.stop();
    ctx.status("Stopped. Starting a fresh Python…", true);
  }
  return {
    onShow() { ensureEditor(); },
    onAddress() {
      // A chapter's "try it in the lab" link names an example: it is loaded once.
      if (state.example) {
        const example = PAGE.examples.find((e) => e.key === state.example);
        examples.value = example.key;
        state.code = example.code;
        state.example = null;
      }
      if (state.code !== null) {
        if (editor) editor.set(state.code); else pending = state.code;
      }
    },
    onStopped() {
      if (!running) return;
      seq++;
      setRunning(false);
      error.textContent = "Stopped: Python was ended and is starting afresh.";
      root.dataset.python = "stopped";
    },
    reset() {
      seq++;
      output.textContent = error.textContent = note.textContent = "";
      figures.replaceChildren();
      delete root.dataset.python;
      if (editor) editor.set(PAGE.examples.find((e) => e.key === PAGE.default_example).code);
    },
  };
}
