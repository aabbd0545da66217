// The lab's Python editor, part 1: CodeMirror 6's core (state, view, commands).
// scripts/setup bundles it with editor-python.js (esbuild, from npm) into
// _vendor/vendor/codemirror/: two modules, loaded one after the other so
// that neither keeps the page busy for long.
export { EditorState } from "@codemirror/state";
export { EditorView, keymap, lineNumbers, highlightActiveLine, drawSelection } from "@codemirror/view";
export { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
