/*
 * StackLens INP attribution (docs/performance.md, "INP causes"; docs/sdk.md, "Browser"): which interaction,
 * which part of it, which script — first party or third.
 *
 * Chromium's Event Timing entries give each interaction's input delay (input until its handlers start),
 * processing time (the handlers) and presentation delay (until the next paint); its Long Animation Frame
 * entries name the scripts that ran in the frames the interaction overlapped (source URL, function, invoker,
 * duration) — what web-vitals' attribution build reads. Each interaction of at least `minDuration` ms is sent
 * as a standalone INP span (op `ui.interaction.<type>`, as @sentry/browser names its own) with `inp.*` data,
 * through the same tunnel or DSN as @sentry/browser. Browsers without Event Timing (Safari, older Firefox) send
 * nothing; without Long Animation Frames (Firefox) the parts are sent without scripts (`inp.loaf` false), so
 * StackLens can say "no script attribution from Firefox" instead of 0 ms.
 *
 *   StackLensINP.start({ sentry: Sentry });            // after Sentry.init: its DSN, tunnel, release, environment
 *   StackLensINP.start({ dsn: "https://key@host/1", tunnel: "/stacklens/tunnel", release: "web@1.2.3" });
 *
 * Whether a script is a third party's is decided by StackLens from its host (the page's host and the project's
 * own hosts are first party); nothing is sent but timings, URLs of scripts and the element's selector.
 */
(function (global) {
  "use strict";

  var MAX_SCRIPTS = 20; // per interaction: the longest ones
  var MAX_SPANS = 50; // per envelope (StackLens and Relay take up to 100 standalone spans)

  function hex(bytes) {
    var out = "";
    var values = new Uint8Array(bytes);
    global.crypto.getRandomValues(values);
    for (var i = 0; i < values.length; i++) out += (values[i] < 16 ? "0" : "") + values[i].toString(16);
    return out;
  }

  // A short CSS path of the element, as @sentry/browser's INP span names its target: tag#id or tag.class, up to
  // three levels, stopping at the first id.
  function selector(el) {
    var parts = [];
    for (var n = el, depth = 0; n && n.nodeType === 1 && depth < 3; n = n.parentElement, depth++) {
      var s = n.tagName.toLowerCase();
      if (n.id) {
        parts.unshift(s + "#" + n.id);
        break;
      }
      if (n.classList && n.classList.length) s += "." + Array.prototype.slice.call(n.classList, 0, 2).join(".");
      parts.unshift(s);
    }
    return parts.join(" > ");
  }

  function round1(x) {
    return Math.round(x * 10) / 10;
  }

  function kind(name) {
    if (/^(pointer|mouse|click|touch|tap|auxclick|contextmenu)/.test(name)) return "click";
    if (/^key/.test(name)) return "press";
    return name;
  }

  function envelopeUrl(dsn) {
    var url = new URL(dsn);
    var path = url.pathname.replace(/\/+$/, "");
    var project = path.slice(path.lastIndexOf("/") + 1);
    var prefix = path.slice(0, path.lastIndexOf("/"));
    return url.protocol + "//" + url.host + prefix + "/api/" + project + "/envelope/?sentry_version=7&sentry_key=" +
      encodeURIComponent(decodeURIComponent(url.username));
  }

  function sentryOptions(sentry) {
    var client = sentry && sentry.getClient && sentry.getClient();
    return client && client.getOptions ? client.getOptions() : {};
  }

  function traceId(sentry) {
    try {
      var span = sentry.getActiveSpan && sentry.getActiveSpan();
      if (span) return (sentry.getRootSpan ? sentry.getRootSpan(span) : span).spanContext().traceId;
      return sentry.getCurrentScope().getPropagationContext().traceId;
    } catch (e) {
      return "";
    }
  }

  function start(options) {
    options = options || {};
    var types = (global.PerformanceObserver && PerformanceObserver.supportedEntryTypes) || [];
    if (types.indexOf("event") < 0) return false; // no Event Timing: nothing to attribute
    var sentry = options.sentry || global.Sentry;
    var fromSentry = sentryOptions(sentry);
    var dsn = options.dsn || fromSentry.dsn;
    if (!dsn) return false;
    var target = options.tunnel || fromSentry.tunnel || envelopeUrl(dsn);
    var release = options.release || fromSentry.release || "";
    var environment = options.environment || fromSentry.environment || "";
    var minDuration = options.minDuration != null ? options.minDuration : 40;
    var loafs = types.indexOf("long-animation-frame") >= 0;
    var frames = []; // recent long animation frames
    var counted = {}; // script runs already attributed to an interaction
    var open = {}; // interactionId -> the interaction's entries so far
    var ready = []; // finished spans waiting to be sent
    var timer = null;
    var trace = (sentry && traceId(sentry)) || hex(16);
    var origin = performance.timeOrigin || Date.now() - performance.now();

    function scriptsOf(i) {
      var out = [];
      frames.forEach(function (frame) {
        if (frame.startTime > i.end || frame.startTime + frame.duration < i.start) return;
        (frame.scripts || []).forEach(function (s) {
          if (s.startTime > i.end || s.startTime + s.duration < i.start) return;
          // A script run that overlaps two interactions (the end of one, the input of the next) is counted
          // once, for the first: the scripts' time then adds up to what the page spent.
          var key = s.startTime + " " + s.sourceURL;
          if (counted[key]) return;
          counted[key] = true;
          var part = s.startTime < i.processingStart - 1 ? "input_delay" : s.startTime < i.processingEnd ? "processing" : "presentation";
          out.push({
            url: s.sourceURL || "",
            function: s.sourceFunctionName || "",
            invoker: s.invoker || "",
            duration: round1(s.duration),
            part: part,
          });
        });
      });
      out.sort(function (a, b) { return b.duration - a.duration; });
      return out.slice(0, MAX_SCRIPTS);
    }

    function finish(id) {
      var i = open[id];
      delete open[id];
      var inp = i.end - i.start;
      if (inp < minDuration) return;
      // The target and type travel as the span's description and op (what StackLens reads when `inp.target`
      // and `inp.type` are absent): each byte here is stored with every interaction.
      var data = {
        "url.full": global.location.href,
        "user_agent.original": navigator.userAgent,
        "inp.input_delay": round1(Math.max(0, i.processingStart - i.start)),
        "inp.processing": round1(Math.max(0, i.processingEnd - i.processingStart)),
        "inp.presentation": round1(Math.max(0, i.end - i.processingEnd)),
        "inp.loaf": loafs,
      };
      if (release) data["sentry.release"] = release;
      if (environment) data["sentry.environment"] = environment;
      if (loafs) data["inp.scripts"] = scriptsOf(i);
      ready.push({
        op: "ui.interaction." + i.type,
        description: i.target,
        span_id: hex(8),
        trace_id: trace,
        start_timestamp: (origin + i.start) / 1000,
        timestamp: (origin + i.end) / 1000,
        measurements: { inp: { value: inp, unit: "millisecond" } },
        data: data,
      });
    }

    function send(keepalive) {
      while (ready.length) {
        var spans = ready.splice(0, MAX_SPANS);
        var lines = [JSON.stringify({ dsn: dsn, sent_at: new Date().toISOString(), sdk: { name: "stacklens.inp", version: "1" } })];
        spans.forEach(function (span) {
          lines.push(JSON.stringify({ type: "span" }), JSON.stringify(span));
        });
        try {
          global.fetch(target, { method: "POST", body: lines.join("\n") + "\n", keepalive: !!keepalive, credentials: "omit" })
            .catch(function () {});
        } catch (e) {
          /* a failed report must never break the page */
        }
      }
    }

    // An interaction is complete once the frame after its paint is over: its long animation frames have been
    // reported by then (they are delivered when a frame ends).
    function settle(all) {
      var now = performance.now();
      Object.keys(open).forEach(function (id) {
        if (all || now - open[id].end > 250) finish(id);
      });
      frames = frames.filter(function (f) { return now - (f.startTime + f.duration) < 10000; });
      Object.keys(counted).forEach(function (key) {
        if (now - parseFloat(key) > 20000) delete counted[key];
      });
      send(all);
      timer = Object.keys(open).length ? global.setTimeout(function () { settle(false); }, 300) : null;
    }

    new PerformanceObserver(function (list) {
      list.getEntries().forEach(function (e) {
        if (!e.interactionId) return;
        var i = open[e.interactionId];
        if (!i) {
          i = open[e.interactionId] = { start: e.startTime, end: 0, processingStart: e.processingStart, processingEnd: 0, target: "", type: kind(e.name) };
        }
        i.start = Math.min(i.start, e.startTime);
        i.end = Math.max(i.end, e.startTime + e.duration);
        i.processingStart = Math.min(i.processingStart, e.processingStart);
        i.processingEnd = Math.max(i.processingEnd, e.processingEnd);
        if (!i.target && e.target) i.target = selector(e.target);
      });
      if (!timer) timer = global.setTimeout(function () { settle(false); }, 300);
    }).observe({ type: "event", durationThreshold: 16, buffered: true });

    if (loafs) {
      new PerformanceObserver(function (list) {
        frames.push.apply(frames, list.getEntries());
      }).observe({ type: "long-animation-frame", buffered: true });
    }
    global.addEventListener("visibilitychange", function () {
      if (global.document.visibilityState === "hidden") settle(true);
    });
    global.addEventListener("pagehide", function () { settle(true); });
    return true;
  }

  global.StackLensINP = { start: start };
})(typeof window !== "undefined" ? window : this);
