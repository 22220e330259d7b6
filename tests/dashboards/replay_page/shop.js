// The page the replay test records: @sentry/browser with its Replay integration (defaults: all text and
// inputs masked), sending to the DSN given in the query string; "Pay now" throws.
var params = new URLSearchParams(location.search);
var dsn = params.get("dsn");
var buffer = params.get("mode") === "buffer"; // record only the minute before an error
Sentry.init({
  dsn: dsn,
  release: "shop@replay-test",
  environment: "test",
  integrations: [Sentry.replayIntegration()],
  replaysSessionSampleRate: buffer ? 0.0 : 1.0,
  replaysOnErrorSampleRate: 1.0
});
document.getElementById("add").addEventListener("click", function () {
  var count = document.getElementById("count");
  count.textContent = String(Number(count.textContent) + 1);
});
document.getElementById("pay").addEventListener("click", function () {
  var cart = null;
  return cart.total.amount; // TypeError: the error the replay leads to
});
