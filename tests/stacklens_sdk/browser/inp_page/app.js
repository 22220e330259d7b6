// The page's own code (first party): a click handler that keeps the main thread busy ~300 ms. What each run
// really spent is recorded, so the test compares StackLens' figures with it.
window.SPENT = { handler: [], widget: [] };
document.getElementById("buy").addEventListener("click", function addToCart() {
  var t0 = performance.now();
  while (performance.now() - t0 < 300) {
    // busy on purpose
  }
  document.getElementById("count").textContent = String(window.SPENT.handler.length + 1);
  window.SPENT.handler.push(performance.now() - t0);
});
