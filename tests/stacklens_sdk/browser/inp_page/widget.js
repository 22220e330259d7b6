// A third party's script (served from another origin): a timer that keeps the main thread busy ~120 ms every
// 600 ms, as a chat or ad widget polling on the main thread does. LAST_TICK: when its last run started (epoch
// ms), so the test can click while it runs, as a user who clicks at that moment does.
setInterval(function tick() {
  var t0 = performance.now();
  window.LAST_TICK = Date.now();
  while (performance.now() - t0 < 120) {
    // busy on purpose
  }
  if (window.SPENT) window.SPENT.widget.push(performance.now() - t0);
}, 600);
