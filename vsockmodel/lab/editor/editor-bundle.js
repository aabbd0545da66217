// The lab's Python editor: CodeMirror 6 with Python highlighting, bundled by
// scripts/setup (esbuild, from npm) into _vendor/vendor/codemirror/editor.js,
// which the lab's Python mode imports only when it is opened.
export { EditorState } from "@codemirror/state";
export { EditorView, keymap, lineNumbers, highlightActiveLine, drawSelection } from "@codemirror/view";
export { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
export { syntaxHighlighting, defaultHighlightStyle, indentOnInput, bracketMatching, HighlightStyle } from "@codemirror/language";
export { tags } from "@lezer/highlight";
export { python } from "@codemirror/lang-python";
