// A dashboard's drill-down, auto-refresh and full screen (docs/explore.md). A static file: the CSP allows no
// inline script. The drill links come from each figure's JSON block ("drill": one list of links per trace,
// one link per point), written by the server; nothing here composes a URL from what a user typed.
"use strict";

(function () {
  function readJson(id) {
    var node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  }

  function bindDrill(el, links) {
    if (typeof el.on !== "function") return;  // a figure plotly.js did not draw
    el.setAttribute("data-drill", "yes");
    el.on("plotly_click", function (event) {
      var point = event && event.points && event.points[0];
      if (!point) return;
      var trace = links[point.curveNumber] || [];
      var index = point.pointIndex;
      if (Array.isArray(index)) index = index[1];  // a heat map's point: [row, column]
      var href = trace[index];
      if (href) window.location.assign(href);
    });
  }

  // The figures are drawn once app.js has loaded plotly.js; it says so with "stacklens:figures".
  function drillDown() {
    document.querySelectorAll("#dashboard-grid [data-figure]").forEach(function (el) {
      var figure = readJson(el.getAttribute("data-figure"));
      if (figure && figure.drill && figure.drill.length) bindDrill(el, figure.drill);
    });
  }

  function autoRefresh() {
    var marker = document.getElementById("dashboard-refresh");
    var seconds = marker ? parseInt(marker.getAttribute("data-seconds"), 10) : 0;
    if (!seconds) return;
    var due = Date.now() + seconds * 1000;
    var timer = null;
    function arm() {
      if (timer) window.clearTimeout(timer);
      timer = null;
      if (document.hidden) return;  // paused while the tab is hidden: no question asked for nobody
      timer = window.setTimeout(function () { window.location.reload(); }, Math.max(0, due - Date.now()));
    }
    document.addEventListener("visibilitychange", arm);
    arm();
  }

  function fullScreen() {
    var button = document.getElementById("dashboard-fullscreen");
    if (!button) return;
    button.addEventListener("click", function () {
      var root = document.documentElement;
      if (document.fullscreenElement) document.exitFullscreen();
      else if (root.requestFullscreen) root.requestFullscreen();
    });
  }

  function start() {
    if (window.stacklensFiguresDrawn) drillDown();
    else document.addEventListener("stacklens:figures", drillDown, { once: true });
    autoRefresh();
    fullScreen();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
