// The lab's Python editor, part 2: Python's grammar and highlighting (see editor-core.js).
export { syntaxHighlighting, defaultHighlightStyle, indentOnInput, bracketMatching } from "@codemirror/language";
export { python } from "@codemirror/lang-python";
