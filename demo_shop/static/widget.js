// A third party's chat widget, served from the demo's second host name (localhost instead of 127.0.0.1):
// its timer polls on the main thread for ~120 ms every 400 ms, so a click that lands while it runs waits for
// it — input delay the INP page attributes to a third party.
setInterval(function poll() {
  var t0 = performance.now();
  while (performance.now() - t0 < 120) {
    // busy on purpose: a widget doing its work on the main thread
  }
}, 400);
