/* ch4-validate-note: the course's words in nbgrader's Validate dialog (tools/lab.sh puts this folder
 * on JupyterLab's extension path; docs/students.md).
 *
 * When every visible test passes, nbgrader's frontend writes "Success! Your notebook passes all the
 * tests." (a fixed string in its JavaScript; no setting changes it), while the hidden tests, which
 * run only when the notebook is graded, did not run at all. This rewrites that one message: it says
 * that the visible tests pass, and how many hidden tests, worth how many points, are left for
 * grading, counted from the notebook's test cells (`# 🧪 隐藏测试 N（P 分）` and nbgrader's points).
 *
 * A JupyterLab prebuilt extension written by hand, with no build step and no import: JupyterLab's
 * bootstrap loads this file, then calls init() and get("./extension") of window._JUPYTERLAB[name]
 * as it does for a webpack-built one, and activates the plugin that get() returns.
 */
(function () {
  "use strict";
  var NAME = "ch4-validate-note";
  var HIDDEN_TITLE = /^#\s*🧪\s*隐藏测试/m;

  function sourceOf(cell) {
    return Array.isArray(cell.source) ? cell.source.join("") : String(cell.source || "");
  }

  /** [tests, points] of the visible and the hidden test cells of a notebook panel, or null. */
  function tally(panel) {
    var model = panel && panel.context && panel.context.model;
    if (!model || typeof model.toJSON !== "function") {
      return null;
    }
    var counts = { visible: [0, 0], hidden: [0, 0] };
    (model.toJSON().cells || []).forEach(function (cell) {
      var meta = (cell.metadata || {}).nbgrader || {};
      if (!meta.grade || meta.solution) {
        return;
      }
      var kind = HIDDEN_TITLE.test(sourceOf(cell)) ? "hidden" : "visible";
      counts[kind][0] += 1;
      counts[kind][1] += Number(meta.points) || 0;
    });
    return counts.visible[0] + counts.hidden[0] ? counts : null;
  }

  function message(counts) {
    if (!counts) {
      return ["✅ 可见测试全部通过。", "隐藏测试（如果有）在评分时才运行，这次检查没有运行它们。"];
    }
    var visible = counts.visible, hidden = counts.hidden;
    if (!hidden[0]) {
      return ["✅ 全部 " + visible[0] + " 个测试通过（" + visible[1] + " 分）。"];
    }
    return [
      "✅ 可见测试全部通过（" + visible[0] + " 个，" + visible[1] + " 分）。",
      "另有 " + hidden[0] + " 个隐藏测试（" + hidden[1] + " 分，全题共 " + (visible[1] + hidden[1]) + " 分）这次没有运行：" +
        "它们在评分时才运行，用你没见过的输入检查，所以现在还不能确定拿满分。",
    ];
  }

  function rewrite(box, panel) {
    box.textContent = "";
    message(tally(panel)).forEach(function (line) {
      var p = document.createElement("p");
      p.textContent = line;
      box.appendChild(p);
    });
    box.setAttribute("data-ch4", "hidden-tests");
    // the header's title is rendered (by React) after the dialog is in the page: wait for it
    var dialog = box.closest(".jp-Dialog");
    var header = dialog && dialog.querySelector(".jp-Dialog-header");
    if (header) {
      var retitle = function () {
        if (header.textContent.trim() !== "Validation Results") {
          return false;
        }
        header.textContent = "检查结果";
        return true;
      };
      if (!retitle()) {
        var watch = new MutationObserver(function () {
          if (retitle()) {
            watch.disconnect();
          }
        });
        watch.observe(header, { childList: true, subtree: true, characterData: true });
      }
    }
  }

  var plugin = {
    id: NAME + ":plugin",
    description: "Rewrites the success message of nbgrader's Validate dialog in Chinese, with the hidden tests that did not run.",
    autoStart: true,
    activate: function (app) {
      var validated = null; // the notebook whose toolbar was clicked last: its Validate made the dialog
      document.addEventListener(
        "click",
        function (event) {
          if (event.target && event.target.closest && event.target.closest(".jp-NotebookPanel-toolbar")) {
            validated = app.shell.currentWidget;
          }
        },
        true
      );
      // nbgrader's dialog is attached to <body> with its message already inside.
      new MutationObserver(function (records) {
        records.forEach(function (record) {
          record.addedNodes.forEach(function (node) {
            var box = node.querySelector && node.querySelector("#validation-message.validation-success");
            if (box && !box.hasAttribute("data-ch4")) {
              rewrite(box, validated || app.shell.currentWidget);
            }
          });
        });
      }).observe(document.body, { childList: true });
    },
  };

  window._JUPYTERLAB = window._JUPYTERLAB || {};
  window._JUPYTERLAB[NAME] = {
    init: function () {
      return Promise.resolve();
    },
    get: function () {
      return Promise.resolve(function () {
        return { __esModule: true, default: plugin };
      });
    },
  };
})();
