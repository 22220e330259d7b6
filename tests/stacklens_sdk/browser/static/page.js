// The test page's own code: start the SDK with browser tracing and the tunnel, then do what a page does.
(function () {
  const config = window.STACKLENS_CONFIG;
  Sentry.init({
    dsn: config.dsn,
    tunnel: config.tunnel,
    release: "shop-web@1.4.2",
    environment: "test",
    // The page load stays open 4 s after its last activity (the SDK's default is 1 s): the test's clicks,
    // and the INP span that names the page load, come within it on a loaded machine too.
    integrations: [Sentry.browserTracingIntegration({ idleTimeout: 4000 })],
    tracesSampleRate: 1.0,
    // @sentry/browser 11 streams spans by default; "static" sends each page load as one transaction
    // event with its measurements and child spans, the payload StackLens ingests.
    traceLifecycle: "static",
  });

  function loadProducts() {
    return Promise.all([
      fetch("/api/products").then((r) => r.json()),
      fetch("/api/missing").then((r) => r.status),
    ]);
  }

  function renderProducts(products) {
    const list = document.getElementById("products");
    for (const p of products) {
      const li = document.createElement("li");
      li.textContent = p.name + " — " + p.price;
      list.appendChild(li);
    }
  }

  function applyDiscount(order) {
    // The error the test expects: a TypeError thrown from page code, with a stack trace.
    return order.lines.map((line) => line.price * 0.9);
  }

  window.addEventListener("load", function () {
    // A banner inserted above the content after first paint shifts the layout: a real CLS entry.
    setTimeout(function () {
      const banner = document.createElement("div");
      banner.className = "banner";
      banner.textContent = "Free shipping this week";
      document.body.insertBefore(banner, document.body.firstChild);
    }, 100);
    loadProducts().then(([data]) => renderProducts(data.products));
  });

  document.getElementById("checkout").addEventListener("click", function () {
    applyDiscount({});
  });

  document.getElementById("recommend").addEventListener("click", function () {
    // A slow handler: the main thread is busy ~600 ms, so the next paint is late and INP records it — later
    // than the checkout click's, whose error and fetch take a loaded machine's cores a few hundred ms too.
    const until = performance.now() + 600;
    while (performance.now() < until) {
      // busy-wait on purpose
    }
    document.getElementById("recommend").textContent = "Recommended";
  });
})();
