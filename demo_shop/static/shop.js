// The shop's own bundle (first party): the cart's "Add to cart" handler recomputes the cart and re-renders
// the whole list on the main thread — ~250 ms of processing per click, the slow interaction the INP page
// shows (docs/performance.md, "INP causes"; the demo's traffic sends what this does in Chromium,
// demo/browser_interactions.py).
(function () {
  var button = document.getElementById("add-to-cart");
  if (!button) return;
  button.addEventListener("click", function addToCart() {
    var t0 = performance.now();
    var lines = document.getElementById("cart-lines");
    lines.textContent = "";
    for (var i = 0; performance.now() - t0 < 250; i++) {
      // recompute every line's price, as the shop's first version did
      Math.sqrt(i * 7919);
    }
    var li = document.createElement("li");
    li.textContent = "Lens cap × " + (lines.childElementCount + 1);
    lines.appendChild(li);
  });
})();
