/* ch4-validate-note: the course's words in nbgrader's Validate dialog (tools/lab.sh puts this folder
 * on JupyterLab's extension path; docs/students.md).
 *
 * When every visible test passes, nbgrader's frontend writes "Success! Your notebook passes all the
 * tests." (a fixed string in its JavaScript; no setting changes it), while the hidden tests, which
 * run only when the notebook is graded, did not run at all. This rewrites that one message: it says
 * that the visible tests pass, and how many hidden tests, worth how many points, are left for
 * grading, counted from the notebook's test cells (`# 🧪 隐藏测试 N（P 分）` and nbgrader's points).
 * When tests fail, nbgrader shows each failed cell's code (30 lines and more) above its message, so
 * the one line that says what to fix is below the fold: the messages go first, each with the cell's
 * code folded under it.
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

  function paragraph(text) {
    var p = document.createElement("p");
    p.textContent = text;
    return p;
  }

  function rewrite(box, panel) {
    box.textContent = "";
    message(tally(panel)).forEach(function (line) {
      box.appendChild(paragraph(line));
    });
    box.setAttribute("data-ch4", "hidden-tests");
    retitle(box);
  }

  /** nbgrader lists each failed cell as three blocks: its "The following cell failed:" line, the
   * cell's code, the cell's error (the course's message). Anything else is left as it is. */
  function reorder(box) {
    var blocks = Array.prototype.slice.call(box.children);
    if (!blocks.length || blocks.length % 3) {
      return;
    }
    box.textContent = "";
    box.appendChild(paragraph("有 " + blocks.length / 3 + " 个测试没有通过。每条说明下面折叠着那个测试单元格的代码，点开可以看。"));
    for (var k = 0; k < blocks.length; k += 3) {
      var code = document.createElement("details");
      var summary = document.createElement("summary");
      summary.textContent = "测试代码";
      code.appendChild(summary);
      code.appendChild(blocks[k + 1]);
      box.appendChild(blocks[k + 2]);
      box.appendChild(code);
    }
    box.setAttribute("data-ch4", "failures-first");
    retitle(box);
  }

  function retitle(box) {
    // the header's title is rendered (by React) after the dialog is in the page: wait for it
    var dialog = box.closest(".jp-Dialog");
    var header = dialog && dialog.querySelector(".jp-Dialog-header");
    if (header) {
      var renamed = function () {
        if (header.textContent.trim() !== "Validation Results") {
          return false;
        }
        header.textContent = "检查结果";
        return true;
      };
      if (!renamed()) {
        var watch = new MutationObserver(function () {
          if (renamed()) {
            watch.disconnect();
          }
        });
        watch.observe(header, { childList: true, subtree: true, characterData: true });
      }
    }
  }

  var plugin = {
    id: NAME + ":plugin",
    description: "nbgrader's Validate dialog in Chinese: the hidden tests that did not run, the failed tests' messages first.",
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
            var box = node.querySelector && node.querySelector("#validation-message");
            if (!box || box.hasAttribute("data-ch4")) {
              return;
            }
            if (box.classList.contains("validation-success")) {
              rewrite(box, validated || app.shell.currentWidget);
            } else if (box.classList.contains("validation-failed")) {
              reorder(box);
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
