// The trace page's waterfall (dashboards/templates/trace.html). The spans arrive as data (the JSON block
// #trace-data, dashboards/trace_rows.py) and only the rows in view are in the document: rows have one fixed
// height and are placed through the CSSOM (the CSP allows it; no inline style or script), so a trace of
// 5,000 spans opens in the time of a few dozen rows. A subtree folds and unfolds, "Find in trace" marks and
// steps through matching spans, "Next failed span" steps through failures, the critical path can be shown
// alone, and the keyboard moves the selection; the selected span's details and links sit below.
// Every value from a span is written with textContent, never as markup.
(function () {
  "use strict";
  var source = document.getElementById("trace-data");
  if (!source) { return; }
  var data = JSON.parse(source.textContent);
  var ROW = 24; // px; traces.css gives .trace-sizer .trace-row the same height
  var OVERSCAN = 10; // rows drawn above and below the view, so a scroll step finds them ready
  // Positions in a row's list (dashboards/trace_rows.py FIELDS).
  var ID = 0, PARENT = 1, DEPTH = 2, SERVICE = 3, OP = 4, DESC = 5, START = 6, DUR = 7, START_TEXT = 8,
    DUR_TEXT = 9, FLAGS = 10, STATUS = 11, CODE = 12, PROJECT = 13, EVENT = 14, LOGS = 15, ERRORS = 16;
  var CRITICAL = 1, ORPHAN = 2, FAILED = 4, PAGELOAD = 8;
  var rows = data.rows, n = rows.length, total = data.total > 0 ? data.total : 1;
  var org = encodeURIComponent(data.org), traceId = encodeURIComponent(data.trace);

  // A span's subtree is the rows after it until one no deeper than it (tree order, dashboards/trace_rows.py).
  var end = new Int32Array(n), parentOf = new Int32Array(n), byId = Object.create(null);
  (function () {
    var stack = [];
    for (var i = 0; i < n; i++) {
      var depth = rows[i][DEPTH];
      while (stack.length && rows[stack[stack.length - 1]][DEPTH] >= depth) { end[stack.pop()] = i; }
      parentOf[i] = stack.length ? stack[stack.length - 1] : -1;
      stack.push(i);
      byId[rows[i][ID]] = i;
    }
    while (stack.length) { end[stack.pop()] = n; }
  })();
  var folded = new Uint8Array(n), matched = new Uint8Array(n);
  var matches = [], criticalOnly = false, selected = -1, haystack = null;

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }
  function link(cls, href, text, title) {
    var a = el("a", cls, text);
    a.href = href;
    if (title) { a.title = title; }
    return a;
  }
  function projectPath(r) {
    return "/orgs/" + org + "/projects/" + encodeURIComponent(data.projects[r[PROJECT]] || "");
  }
  function badges(r, into) {
    if (r[FLAGS] & ORPHAN) {
      var b = el("span", "badge orphan-badge", "orphan");
      b.title = "its parent span " + r[PARENT] + " was never received";
      into.appendChild(b);
    }
    r[ERRORS].forEach(function (e) {
      into.appendChild(link("badge error-badge", projectPath(r) + "/issues/" + e[0], "error", e[1]));
    });
    if (r[LOGS]) {
      into.appendChild(link("badge log-badge", projectPath(r) + "/logs?trace_id=" + traceId + "&range=30d",
        r[LOGS] + " log" + (r[LOGS] !== 1 ? "s" : "")));
    }
    if (r[FLAGS] & PAGELOAD) {
      into.appendChild(link("badge", projectPath(r) + "/performance/waterfall/" +
        encodeURIComponent(r[EVENT]), "page load"));
    }
  }

  function makeRow(i) {
    var r = rows[i], flags = r[FLAGS], colour = " c" + (r[SERVICE] % 10);
    var kids = end[i] - i - 1;
    var row = el("div", "trace-row" + (flags & CRITICAL ? " critical" : "") + (flags & ORPHAN ? " orphan" : "") +
      (flags & FAILED ? " failed" : "") + (matched[i] ? " match" : "") + (i === selected ? " selected" : ""));
    row.id = "span-" + r[ID];
    row.dataset.index = i;
    row.setAttribute("role", "treeitem");
    row.setAttribute("aria-level", r[DEPTH] + 1);
    row.setAttribute("aria-selected", i === selected ? "true" : "false");
    var label = el("div", "trace-label d" + Math.min(r[DEPTH], 16));
    if (kids > 0 && !criticalOnly) {
      row.setAttribute("aria-expanded", folded[i] ? "false" : "true");
      var fold = el("button", "fold", folded[i] ? "▸" : "▾");
      fold.type = "button";
      fold.tabIndex = -1;
      fold.title = (folded[i] ? "Unfold " : "Fold ") + kids.toLocaleString("en-US") + " span" + (kids !== 1 ? "s" : "");
      label.appendChild(fold);
    } else {
      label.appendChild(el("span", "fold"));
    }
    label.appendChild(el("i", "swatch" + colour));
    label.appendChild(el("b", "trace-service", data.services[r[SERVICE]]));
    label.appendChild(el("span", "trace-op", r[OP] || "span"));
    var desc = el("span", "trace-desc", r[DESC]);
    desc.title = r[DESC] + " · starts at " + r[START_TEXT] + (r[STATUS] ? " · status " + r[STATUS] : "") +
      (r[CODE] ? " · HTTP " + r[CODE] : "") + (flags & CRITICAL ? " · on the critical path" : "");
    label.appendChild(desc);
    if (folded[i] && !criticalOnly) {
      label.appendChild(el("span", "badge folded-badge", "+" + kids.toLocaleString("en-US")));
    }
    badges(r, label);
    var track = el("div", "trace-bar"), bar = el("i", "bar" + colour);
    bar.style.left = Math.min(100, (r[START] / total) * 100).toFixed(3) + "%";
    bar.style.width = Math.min(100, (r[DUR] / total) * 100).toFixed(3) + "%";
    track.appendChild(bar);
    row.appendChild(label);
    row.appendChild(track);
    row.appendChild(el("div", "trace-dur", r[DUR_TEXT]));
    return row;
  }

  // One windowed list per part of the page: the rooted trees, then the orphan subtrees.
  function List(box, from, to) {
    this.box = box;
    this.viewport = box.querySelector(".trace-viewport");
    this.sizer = box.querySelector(".trace-sizer");
    this.axis = box.querySelector(".trace-axis");
    this.from = from;
    this.to = to;
    this.visible = [];
    this.position = Object.create(null);
    this.shown = new Map();
    var self = this, pending = false;
    this.viewport.addEventListener("scroll", function () {
      if (pending) { return; }
      pending = true;
      requestAnimationFrame(function () { pending = false; self.draw(); });
    });
  }
  List.prototype.has = function (i) { return i >= this.from && i < this.to; };
  List.prototype.rebuild = function () {
    var visible = [], position = Object.create(null), i = this.from;
    while (i < this.to) {
      if (criticalOnly && !(rows[i][FLAGS] & CRITICAL)) { i++; continue; }
      position[i] = visible.length;
      visible.push(i);
      i = !criticalOnly && folded[i] ? end[i] : i + 1;
    }
    this.visible = visible;
    this.position = position;
    this.sizer.style.height = visible.length * ROW + "px";
    this.redraw();
  };
  List.prototype.redraw = function () {
    this.shown.forEach(function (node) { node.remove(); });
    this.shown.clear();
    this.draw();
  };
  List.prototype.draw = function () {
    var top = this.viewport.scrollTop - this.sizer.offsetTop;
    var first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
    var last = Math.min(this.visible.length, Math.ceil((top + this.viewport.clientHeight) / ROW) + OVERSCAN);
    var shown = this.shown;
    shown.forEach(function (node, k) {
      if (k < first || k >= last) { node.remove(); shown.delete(k); }
    });
    for (var k = first; k < last; k++) {
      if (shown.has(k)) { continue; }
      var node = makeRow(this.visible[k]);
      node.style.top = k * ROW + "px";
      this.sizer.appendChild(node);
      shown.set(k, node);
    }
  };
  List.prototype.reveal = function (i) {
    var k = this.position[i];
    if (k === undefined) { return; }
    var view = this.viewport, top = this.sizer.offsetTop + k * ROW;
    var covered = this.axis ? this.axis.offsetHeight : 0; // the sticky axis covers the view's top
    if (top < view.scrollTop + covered) {
      view.scrollTop = top - covered;
    } else if (top + ROW > view.scrollTop + view.clientHeight) {
      view.scrollTop = top + ROW - view.clientHeight;
    }
    this.draw();
  };

  var lists = [];
  [["trace-waterfall", 0, data.orphanStart], ["trace-orphans", data.orphanStart, n]].forEach(function (part) {
    var box = document.getElementById(part[0]);
    if (box && part[2] > part[1]) { lists.push(new List(box, part[1], part[2])); }
  });
  function listOf(i) {
    for (var j = 0; j < lists.length; j++) { if (lists[j].has(i)) { return lists[j]; } }
    return null;
  }
  function rebuildAll() { lists.forEach(function (l) { l.rebuild(); }); }
  function redrawAll() { lists.forEach(function (l) { l.redraw(); }); }

  var detail = document.getElementById("span-detail");
  function fact(dl, term, value) {
    if (value === "" || value === undefined || value === null) { return; }
    dl.appendChild(el("dt", "", term));
    var dd = el("dd");
    if (typeof value === "string" || typeof value === "number") { dd.textContent = String(value); } else { dd.appendChild(value); }
    dl.appendChild(dd);
  }
  function showDetail(i) {
    if (!detail) { return; }
    var r = rows[i], flags = r[FLAGS];
    detail.replaceChildren();
    var head = el("h2", "", "Span ");
    head.appendChild(el("code", "", r[ID]));
    detail.appendChild(head);
    var dl = el("dl", "kv-list");
    fact(dl, "Service", data.services[r[SERVICE]]);
    fact(dl, "Operation", r[OP] || "span");
    fact(dl, "Description", r[DESC]);
    fact(dl, "Starts at", r[START_TEXT] + " after the trace's first span");
    fact(dl, "Duration", r[DUR_TEXT]);
    fact(dl, "Status", r[STATUS] + (flags & FAILED ? " (failed)" : ""));
    fact(dl, "HTTP status", r[CODE] || "");
    var parent = parentOf[i] >= 0 ? rows[parentOf[i]][ID] : r[PARENT];
    fact(dl, "Parent span", parent ? parent + (flags & ORPHAN ? " (never received: an orphan)" : "") : "none (a root)");
    fact(dl, "Critical path", flags & CRITICAL ? "on it" : "not on it");
    fact(dl, "Project", data.projects[r[PROJECT]] || "");
    detail.appendChild(dl);
    var links = el("ul", "span-links");
    function item(a) { var li = el("li"); li.appendChild(a); links.appendChild(li); }
    r[ERRORS].forEach(function (e) {
      item(link("error-link", projectPath(r) + "/issues/" + e[0], "Error: " + e[1]));
    });
    if (r[LOGS]) {
      item(link("log-link", projectPath(r) + "/logs?trace_id=" + traceId + "&range=30d",
        r[LOGS] + " log record" + (r[LOGS] !== 1 ? "s" : "") + " of this trace in the logs view"));
    }
    if (flags & PAGELOAD) {
      item(link("pageload-link", projectPath(r) + "/performance/waterfall/" + encodeURIComponent(r[EVENT]),
        "The page load's waterfall"));
    }
    if (links.childNodes.length) { detail.appendChild(links); }
    detail.hidden = false;
  }

  function select(i, reveal) {
    if (i < 0 || i >= n) { return; }
    if (criticalOnly && !(rows[i][FLAGS] & CRITICAL)) {
      criticalOnly = false;
      var box = document.getElementById("trace-critical-only");
      if (box) { box.checked = false; }
      rebuildAll();
    }
    var unfolded = false;
    for (var p = parentOf[i]; p >= 0; p = parentOf[p]) {
      if (folded[p]) { folded[p] = 0; unfolded = true; }
    }
    if (unfolded) { rebuildAll(); }
    selected = i;
    var list = listOf(i);
    if (list) {
      list.viewport.setAttribute("aria-activedescendant", "span-" + rows[i][ID]);
      if (reveal) {
        list.box.scrollIntoView({ block: "nearest" });
        list.reveal(i);
      }
    }
    redrawAll();
    showDetail(i);
  }
  function toggle(i) {
    if (end[i] - i <= 1 || criticalOnly) { return; }
    folded[i] = folded[i] ? 0 : 1;
    var list = listOf(i);
    if (list) { list.rebuild(); }
  }

  lists.forEach(function (list) {
    list.viewport.addEventListener("click", function (event) {
      var row = event.target.closest(".trace-row");
      if (!row || event.target.closest("a")) { return; }
      var i = +row.dataset.index;
      if (event.target.closest(".fold")) { toggle(i); }
      select(i, false);
      list.viewport.focus({ preventScroll: true });
    });
    list.viewport.addEventListener("keydown", function (event) {
      var v = list.visible, k = list.position[selected];
      if (!v.length) { return; }
      if (k === undefined) { k = -1; }
      var page = Math.max(1, Math.floor(list.viewport.clientHeight / ROW) - 2), to = null;
      switch (event.key) {
        case "ArrowDown": to = v[Math.min(v.length - 1, k + 1)]; break;
        case "ArrowUp": to = v[Math.max(0, k - 1)]; break;
        case "PageDown": to = v[Math.min(v.length - 1, k + page)]; break;
        case "PageUp": to = v[Math.max(0, k - page)]; break;
        case "Home": to = v[0]; break;
        case "End": to = v[v.length - 1]; break;
        case "ArrowRight":
          if (selected >= 0 && folded[selected]) { toggle(selected); to = selected; } else if (selected >= 0 && end[selected] > selected + 1 && !criticalOnly) { to = selected + 1; }
          break;
        case "ArrowLeft":
          if (selected >= 0 && end[selected] > selected + 1 && !folded[selected] && !criticalOnly) { toggle(selected); to = selected; } else if (selected >= 0 && parentOf[selected] >= 0) { to = parentOf[selected]; }
          break;
        case "Enter": case " ":
          if (selected >= 0) { toggle(selected); to = selected; }
          break;
        default: return;
      }
      event.preventDefault();
      if (to !== null && to !== undefined) { select(to, true); }
    });
  });

  // Find in trace: service, operation, description, status or span id; Enter steps on, Shift+Enter back.
  var find = document.getElementById("trace-find"), count = document.getElementById("trace-find-count");
  var current = -1;
  function runFind() {
    var q = find.value.trim().toLowerCase();
    matched.fill(0);
    matches = [];
    current = -1;
    if (q) {
      if (!haystack) {
        haystack = rows.map(function (r) {
          return (data.services[r[SERVICE]] + " " + r[OP] + " " + r[DESC] + " " + r[ID] + " " + r[STATUS]).toLowerCase();
        });
      }
      for (var i = 0; i < n; i++) {
        if (haystack[i].indexOf(q) !== -1) { matched[i] = 1; matches.push(i); }
      }
    }
    count.textContent = !q ? "" : matches.length ? matches.length.toLocaleString("en-US") + " span" + (matches.length !== 1 ? "s" : "") + " match" + (matches.length === 1 ? "es" : "") : "no span matches";
    redrawAll();
  }
  function step(by) {
    if (!matches.length) { return; }
    current = (current + by + matches.length) % matches.length;
    count.textContent = (current + 1).toLocaleString("en-US") + " of " + matches.length.toLocaleString("en-US");
    select(matches[current], true);
  }
  if (find) {
    find.addEventListener("input", runFind);
    find.addEventListener("keydown", function (event) {
      if (event.key === "Enter") { event.preventDefault(); step(event.shiftKey ? -1 : 1); }
    });
    document.getElementById("trace-find-next").addEventListener("click", function () { step(1); });
    document.getElementById("trace-find-prev").addEventListener("click", function () { step(-1); });
    document.addEventListener("keydown", function (event) {
      var t = event.target;
      if (event.key === "/" && !(t.closest && t.closest("input, textarea, select"))) { event.preventDefault(); find.focus(); }
    });
  }

  // Failed spans (a status other than ok, an HTTP 5xx, or an error event written in them), one after another.
  var failed = [];
  for (var f = 0; f < n; f++) { if (rows[f][FLAGS] & FAILED || rows[f][ERRORS].length) { failed.push(f); } }
  var nextError = document.getElementById("trace-next-error");
  if (nextError) {
    nextError.textContent = "Next failed span (" + failed.length.toLocaleString("en-US") + ")";
    nextError.disabled = !failed.length;
    nextError.addEventListener("click", function () {
      var next = failed.find(function (i) { return i > selected; });
      select(next === undefined ? failed[0] : next, true);
    });
  }
  var criticalBox = document.getElementById("trace-critical-only");
  if (criticalBox) {
    criticalBox.addEventListener("change", function () {
      criticalOnly = criticalBox.checked;
      rebuildAll();
    });
  }

  // Links to a span (#span-<id>: the errors and log tables, a shared address) select it.
  function fromHash() {
    var m = /^#span-([0-9a-zA-Z]+)$/.exec(location.hash);
    if (m && byId[m[1]] !== undefined) { select(byId[m[1]], true); }
  }
  document.addEventListener("click", function (event) {
    var a = event.target.closest ? event.target.closest('a[href^="#span-"]') : null;
    if (!a) { return; }
    event.preventDefault();
    history.replaceState(null, "", a.getAttribute("href"));
    fromHash();
  });
  window.addEventListener("hashchange", fromHash);

  // A taller window shows more rows: draw them (a frame at most per resize burst).
  var resizing = false;
  window.addEventListener("resize", function () {
    if (resizing) { return; }
    resizing = true;
    requestAnimationFrame(function () { resizing = false; lists.forEach(function (l) { l.draw(); }); });
  });

  rebuildAll();
  fromHash();
  document.documentElement.classList.add("trace-ready");
})();
