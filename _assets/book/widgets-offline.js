/*
 * Loaded before the ipywidgets HTML manager (_static/vendor/html-manager/
 * embed.js) on pages with widgets; see nb_ipywidgets_js in _config.yml.
 *
 * 1. Point the manager at its own folder for the icon fonts it references.
 *    (Were the RequireJS build, embed-amd.js, used instead, its fonts would
 *    otherwise resolve relative to the page and 404; the require.config call
 *    covers that case.)
 * 2. The manager typesets widget labels with the MathJax 2 API
 *    (MathJax.Hub.Queue); the book uses MathJax 3. Provide that one call.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  var base = new URL("../vendor/html-manager", script ? script.src : document.baseURI).href;
  window.__jupyter_widgets_assets_path__ = base + "/";
  if (window.require && typeof window.require.config === "function") {
    window.require.config({ paths: { "@jupyter-widgets/html-manager/dist": base } });
  }

  function typeset(job) {
    var mj = window.MathJax;
    var el = Array.isArray(job) ? job[2] : undefined;
    function run() {
      if (mj && typeof mj.typesetPromise === "function") {
        return mj.typesetPromise(el ? [el] : undefined);
      }
      return null;
    }
    if (mj && mj.startup && mj.startup.promise) {
      mj.startup.promise.then(run).catch(function () {});
    } else {
      run();
    }
  }

  function shimMathJax() {
    var mj = window.MathJax;
    if (mj && mj.version && !mj.Hub) {
      mj.Hub = { Queue: typeset };
    }
  }

  shimMathJax();
  document.addEventListener("DOMContentLoaded", shimMathJax);
})();
