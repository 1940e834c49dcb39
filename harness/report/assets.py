"""The report page's stylesheet and scripts, inlined into every report (a report needs no other file).

The viewer builds its DOM with ``textContent`` only: model output is shown, never interpreted.
"""

from __future__ import annotations

__all__ = ["ERROR_HOOK_JS", "STYLE_CSS", "VIEWER_JS"]

STYLE_CSS = """
:root { --ink: #1f2328; --muted: #656d76; --line: #d0d7de; --bg: #f6f8fa; --ok: #1a7f37; --bad: #cf222e;
        --run1: #3b6ea5; --run2: #e07b39; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       color: var(--ink); background: #fff; }
header { padding: 16px 24px; border-bottom: 1px solid var(--line); background: var(--bg); }
header h1 { margin: 0 0 4px; font-size: 20px; }
header p { margin: 0; color: var(--muted); }
section { padding: 12px 24px 20px; }
h2 { font-size: 17px; margin: 8px 0 12px; }
table { border-collapse: collapse; }
th, td { padding: 4px 10px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: var(--bg); font-weight: 600; }
td.num { font-variant-numeric: tabular-nums; text-align: right; white-space: nowrap; }
.ci { color: var(--muted); font-size: 12px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; }
.note { color: var(--muted); font-size: 12px; margin: 6px 0 0; }
.plots { display: grid; grid-template-columns: repeat(auto-fill, minmax(520px, 1fr)); gap: 16px; }
figure { margin: 0; padding: 8px; border: 1px solid var(--line); border-radius: 6px; background: #fff; }
figure svg { width: 100%; height: auto; display: block; }
.viewer { display: grid; grid-template-columns: 320px 1fr; gap: 16px; align-items: start; }
.controls { display: flex; flex-direction: column; gap: 6px; margin-bottom: 8px; }
.controls input, .controls select { font: inherit; padding: 4px 6px; border: 1px solid var(--line);
                                    border-radius: 4px; }
#traj-list { list-style: none; margin: 0; padding: 0; max-height: 80vh; overflow: auto; border: 1px solid var(--line);
             border-radius: 6px; }
#traj-list li { padding: 6px 8px; border-bottom: 1px solid var(--line); cursor: pointer; }
#traj-list li:hover { background: var(--bg); }
#traj-list li.selected { background: #ddf4ff; }
#traj-list .key { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
#traj-list .instr { color: var(--muted); font-size: 12px; overflow: hidden; text-overflow: ellipsis;
                    white-space: nowrap; }
.badge { display: inline-block; padding: 0 6px; border-radius: 10px; font-size: 11px; font-weight: 600; color: #fff;
         margin-right: 4px; }
.badge.ok { background: var(--ok); } .badge.bad { background: var(--bad); } .badge.none { background: var(--muted); }
.task { padding: 8px 10px; background: var(--bg); border-radius: 6px; margin-bottom: 10px; }
.columns { display: grid; gap: 12px; }
.column { border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; min-width: 0; }
.column h3 { margin: 0 0 6px; font-size: 15px; }
.column h4 { margin: 12px 0 4px; font-size: 13px; }
.mark-ok { color: var(--ok); font-weight: 700; } .mark-bad { color: var(--bad); font-weight: 700; }
.msg { border-left: 3px solid var(--line); padding: 2px 8px; margin: 6px 0; }
.msg.user { border-color: var(--run1); } .msg.assistant { border-color: #8250df; } .msg.tool { border-color: #9a6700; }
.msg .role { font-size: 11px; font-weight: 700; text-transform: uppercase; color: var(--muted); }
pre { margin: 2px 0; white-space: pre-wrap; word-break: break-word;
      font: 12px/1.4 ui-monospace, "DejaVu Sans Mono", monospace;
      background: var(--bg); padding: 4px 6px; border-radius: 4px; max-height: 360px; overflow: auto; }
pre.err { background: #ffebe9; } pre.okres { background: #dafbe1; }
.diff td, .diff th { font-size: 12px; }
.diff .added { color: var(--ok); } .diff .deleted { color: var(--bad); } .diff .changed { color: #9a6700; }
"""

ERROR_HOOK_JS = """
window.__reportErrors = [];
window.addEventListener("error", function (event) {
  window.__reportErrors.push(String(event.message || event));
  document.documentElement.setAttribute("data-errors", window.__reportErrors.join(" | "));
});
"""

VIEWER_JS = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var runs = data.runs, items = data.items;
  var list = document.getElementById("traj-list");
  var detail = document.getElementById("traj-detail");
  var search = document.getElementById("traj-search");
  var filter = document.getElementById("traj-filter");
  var selected = -1;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) if (arguments[i]) parent.appendChild(arguments[i]);
    return parent;
  }
  function badge(view, label) {
    if (!view) return el("span", "badge none", (label ? label + ": " : "") + "absent");
    var text = (label ? label + ": " : "") + (view.passed ? "pass" : "fail");
    return el("span", "badge " + (view.passed ? "ok" : "bad"), text);
  }
  function pretty(text) {
    if (text === null || text === undefined) return "";
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return String(text); }
  }
  function compact(value) { return typeof value === "string" ? value : JSON.stringify(value); }

  function status(item) {
    var views = item.runs.filter(function (v) { return v; });
    var passed = views.filter(function (v) { return v.passed; }).length;
    return { anyFail: passed < item.runs.length, allPass: passed === item.runs.length,
             differ: item.runs.length > 1 && passed > 0 && passed < item.runs.length };
  }
  function matches(item) {
    var query = search.value.trim().toLowerCase();
    if (query && (item.task_id + " " + item.instruction).toLowerCase().indexOf(query) < 0) return false;
    var s = status(item);
    if (filter.value === "failed") return s.anyFail;
    if (filter.value === "passed") return s.allPass;
    if (filter.value === "differ") return s.differ;
    return true;
  }

  function renderList() {
    list.replaceChildren();
    var shown = 0;
    items.forEach(function (item, index) {
      if (!matches(item)) return;
      shown++;
      var li = el("li", index === selected ? "selected" : "");
      var head = el("div");
      item.runs.forEach(function (view, r) { add(head, badge(view, runs.length > 1 ? "R" + (r + 1) : "")); });
      add(head, el("span", "key", item.task_id + " #" + item.rollout));
      add(li, head, el("div", "instr", item.instruction));
      li.addEventListener("click", function () { select(index); });
      list.appendChild(li);
    });
    document.getElementById("traj-count").textContent = shown + " shown";
  }

  function criteriaTable(item, view) {
    var table = el("table");
    var rubric = item.rubric.length ? item.rubric : Object.keys(view.criteria).map(function (id) {
      return { id: id, description: "" };
    });
    rubric.forEach(function (criterion) {
      var ok = view.criteria[criterion.id];
      var row = el("tr");
      add(row, el("td", ok ? "mark-ok" : "mark-bad", ok ? "\u2713" : "\u2717"), el("td", "", criterion.id),
          el("td", "", criterion.description));
      table.appendChild(row);
    });
    return table;
  }

  function diffTable(diff) {
    if (diff === null) {
      return el("p", "note", "No task definition in the run folder: the state diff cannot be replayed.");
    }
    var services = Object.keys(diff);
    if (!services.length) return el("p", "note", "No state changed.");
    var table = el("table", "diff");
    add(table, add(el("tr"), el("th", "", "service.table"), el("th", "", "change"), el("th", "", "key"),
                   el("th", "", "values")));
    services.forEach(function (service) {
      Object.keys(diff[service]).forEach(function (name) {
        var t = diff[service][name];
        function row(kind, key, text) {
          table.appendChild(add(el("tr"), el("td", "", service + "." + name), el("td", kind, kind), el("td", "", key),
                                add(el("td"), el("pre", "", text))));
        }
        Object.keys(t.added).forEach(function (key) { row("added", key, JSON.stringify(t.added[key], null, 1)); });
        Object.keys(t.changed).forEach(function (key) {
          var c = t.changed[key];
          row("changed", key, c.fields.map(function (f) {
            return f + ": " + compact(c.before[f]) + " \u2192 " + compact(c.after[f]);
          }).join("\n"));
        });
        Object.keys(t.deleted).forEach(function (key) {
          row("deleted", key, JSON.stringify(t.deleted[key], null, 1));
        });
      });
    });
    return table;
  }

  function messageBlock(message) {
    var box = el("div", "msg " + message.role);
    add(box, el("div", "role", message.role + (message.tool_call_id ? " \u2190 " + message.tool_call_id : "")));
    if (message.role === "system") {
      var details = el("details");
      add(details, el("summary", "", "system prompt"), el("pre", "", message.content));
      return add(box, details);
    }
    if (message.reasoning_content) {
      var reasoning = el("details");
      add(box, add(reasoning, el("summary", "", "reasoning"), el("pre", "", message.reasoning_content)));
    }
    if (message.role === "tool") {
      var cls = "";
      try { cls = JSON.parse(message.content).success === false ? "err" : "okres"; } catch (e) { cls = "err"; }
      return add(box, el("pre", cls, pretty(message.content)));
    }
    if (message.content) add(box, el("pre", "", message.content));
    (message.tool_calls || []).forEach(function (call) {
      add(box, el("div", "", "\u2192 " + call.name + "  (" + call.id + ")"), el("pre", "", pretty(call.arguments)));
    });
    return box;
  }

  function runColumn(item, view, run) {
    var column = el("div", "column");
    var title = el("h3");
    add(title, el("span", "swatch"), document.createTextNode(run.label));
    title.firstChild.style.background = run.colour;
    add(column, title);
    if (!view) return add(column, el("p", "note", "This rollout is not in this run."));
    var head = el("p");
    add(head, badge(view), document.createTextNode(
      "rubric " + view.rubric_score.toFixed(3) + " \u00b7 " + view.n_tool_calls + " tool calls (" +
      view.n_service_calls + " reached a service) \u00b7 " + view.n_turns + " turns \u00b7 stop: " +
      view.stop_reason + " \u00b7 agent " + view.agent +
      " \u00b7 " + view.mode + " mode"));
    add(column, head);
    if (view.regrade_agrees === false) {
      add(column, el("p", "mark-bad", "Replaying the calls gives a different grade than recorded."));
    }
    if (view.error) add(column, el("pre", "err", view.error));
    add(column, el("h4", "", "Criteria"), criteriaTable(item, view));
    if (view.collateral.length) {
      add(column, el("h4", "", "Collateral damage"), el("pre", "err", view.collateral.join("\n")));
    }
    if (view.answer) add(column, el("h4", "", "Final answer"), el("pre", "", view.answer));
    add(column, el("h4", "", "State diff"), diffTable(view.diff));
    add(column, el("h4", "", "Messages (" + view.messages.length + "; " + view.n_tools + " tools offered)"));
    view.messages.forEach(function (message) { add(column, messageBlock(message)); });
    return column;
  }

  function select(index) {
    selected = index;
    var item = items[index];
    detail.replaceChildren();
    var task = el("div", "task");
    add(task, el("strong", "", "Task " + item.task_id + ", rollout " + item.rollout), el("div", "", item.instruction));
    var info = item.task_info || {};
    add(task, el("div", "note", "services: " + (info.services || []).join(", ") + " \u00b7 plan length " +
        info.plan_length + " \u00b7 capabilities: " + ((info.capabilities || []).join(", ") || "none")));
    var columns = el("div", "columns");
    columns.style.gridTemplateColumns = "repeat(" + runs.length + ", minmax(0, 1fr))";
    item.runs.forEach(function (view, r) { add(columns, runColumn(item, view, runs[r])); });
    add(detail, task, columns);
    renderList();
  }

  search.addEventListener("input", renderList);
  filter.addEventListener("change", renderList);
  // "report.html#rollout=TASK_ID:N" opens that rollout (links into a report).
  var wanted = /^#rollout=([^:]+):(\d+)$/.exec(decodeURIComponent(location.hash));
  var start = wanted ? items.findIndex(function (it) {
    return it.task_id === wanted[1] && it.rollout === Number(wanted[2]);
  }) : 0;
  if (items.length) select(start < 0 ? 0 : start); else renderList();
  document.documentElement.setAttribute("data-ready", "1");
})();
"""
