// StackLens dashboard behaviour. Loaded as a static file (the CSP allows no inline script); page data
// arrives in <script type="application/json"> blocks and is read with JSON.parse, never evaluated.
"use strict";

function readJson(id) {
  var node = document.getElementById(id);
  return node ? JSON.parse(node.textContent) : null;
}

// plotly.js is 4.8 MB of script that takes a browser 0.3-3 s to evaluate on a first visit: only a page that
// draws a figure fetches it. The script is added before the page's load event, so that event still waits for
// the figures; "stacklens:figures" tells the page's own scripts (dashboard.js) they are drawn.
var PLOTLY_SRC = "/static/vendor/plotly.min.js";

function withPlotly(then) {
  if (window.Plotly) { then(); return; }
  var script = document.createElement("script");
  script.src = PLOTLY_SRC;
  script.addEventListener("load", then);
  document.head.appendChild(script);
}

function drawFigures() {
  var holders = document.querySelectorAll("[data-figure]");
  if (!holders.length) return;
  withPlotly(function () {
    holders.forEach(function (el) {
      var figure = readJson(el.getAttribute("data-figure"));
      if (figure) {
        window.Plotly.newPlot(el, figure.data || [], figure.layout || {}, { displayModeBar: false, responsive: true });
      }
    });
    window.stacklensFiguresDrawn = true;
    document.dispatchEvent(new Event("stacklens:figures"));
  });
}

function framesToggle() {
  var stack = document.getElementById("stack");
  if (!stack) return;
  var buttons = stack.querySelectorAll(".frames-toggle");
  function show(mode) {
    stack.classList.toggle("app-only", mode === "app");
    buttons.forEach(function (b) { b.classList.toggle("active", b.getAttribute("data-frames") === mode); });
  }
  // App frames only by default, unless the event has no in-app frame at all.
  show(stack.querySelector(".frame.in-app") ? "app" : "full");
  buttons.forEach(function (b) { b.addEventListener("click", function () { show(b.getAttribute("data-frames")); }); });
}

function breadcrumbFilter() {
  var category = document.getElementById("crumb-category");
  var search = document.getElementById("crumb-search");
  if (!category || !search) return;
  function apply() {
    var wanted = category.value;
    var needle = search.value.toLowerCase();
    var rows = document.querySelectorAll("tr.crumb");
    var shown = 0;
    rows.forEach(function (row) {
      var message = row.querySelector(".crumb-message").textContent.toLowerCase();
      // A category filter takes its sub-categories too: "ui" shows "ui.click" and "ui.input".
      var got = row.getAttribute("data-category");
      var inCategory = !wanted || got === wanted || got.indexOf(wanted + ".") === 0;
      var ok = inCategory && (!needle || message.indexOf(needle) !== -1);
      row.hidden = !ok;
      if (ok) shown += 1;
    });
    // A filter that hides every breadcrumb says so, naming what it was asked for.
    var none = document.getElementById("crumbs-none");
    if (!none) return;
    var asked = [];
    if (wanted) asked.push("category " + wanted);
    if (search.value) asked.push("“" + search.value + "”");
    none.hidden = shown > 0 || rows.length === 0;
    none.textContent = none.hidden ? "" : "No breadcrumbs match " + asked.join(" and ") + ".";
  }
  category.addEventListener("change", apply);
  search.addEventListener("input", apply);
}

function copyError() {
  var button = document.getElementById("copy-error");
  if (!button) return;
  button.addEventListener("click", function () {
    var text = readJson("copy-text") || "";
    var done = function () { button.textContent = "Copied"; };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { fallbackCopy(text); done(); });
    } else { fallbackCopy(text); done(); }
  });
}

function fallbackCopy(text) {
  var area = document.createElement("textarea");
  area.value = text;
  document.body.appendChild(area);
  area.select();
  try { document.execCommand("copy"); } catch (e) { /* the text stays selectable in the page */ }
  document.body.removeChild(area);
}

function comparePicker() {
  var form = document.getElementById("compare-form");
  if (!form) return;
  var button = document.getElementById("compare-button");
  function update() {
    var picked = Array.prototype.filter.call(form.querySelectorAll(".compare-pick"), function (b) { return b.checked; });
    button.disabled = picked.length !== 2;
    document.getElementById("compare-a").value = picked[0] ? picked[0].value : "";
    document.getElementById("compare-b").value = picked[1] ? picked[1].value : "";
  }
  form.querySelectorAll(".compare-pick").forEach(function (b) { b.addEventListener("change", update); });
}

function selectAll() {
  var all = document.getElementById("select-all");
  if (!all) return;
  all.addEventListener("change", function () {
    document.querySelectorAll("input[name=issue_ids]").forEach(function (b) { b.checked = all.checked; });
  });
}

// The new-rule form shows the fields of the chosen rule type only (each field names its types in
// data-rule-types); without script every field shows, and the server ignores those of other types.
function ruleTypeFields() {
  var type = document.getElementById("rule-type");
  if (!type) return;
  function apply() {
    document.querySelectorAll("[data-rule-types]").forEach(function (el) {
      el.hidden = el.getAttribute("data-rule-types").split(" ").indexOf(type.value) < 0;
    });
  }
  apply();
  type.addEventListener("change", apply);
}

document.addEventListener("DOMContentLoaded", function () {
  drawFigures();
  ruleTypeFields();
  framesToggle();
  breadcrumbFilter();
  copyError();
  comparePicker();
  selectAll();
});
