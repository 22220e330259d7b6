// Sentry's crash-report dialog, served by StackLens at /api/embed/error-page/ (docs/feedback.md).
// Sentry.showReportDialog() adds this script to the page with the DSN, the event id and its options in the
// script's own URL; the dialog posts the form back to that URL. It builds its elements with the DOM and
// styles them through the CSSOM, so a page with a strict Content-Security-Policy can show it too.
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || !script.src) { return; }
  var endpoint = script.src;
  var params = new URL(endpoint).searchParams;
  function option(key, fallback) { return params.get(key) || fallback; }
  var text = {
    title: option("title", "It looks like we're having issues."),
    subtitle: option("subtitle", "Our team has been notified."),
    subtitle2: option("subtitle2", "If you'd like to help, tell us what happened below."),
    labelName: option("labelName", "Name"),
    labelEmail: option("labelEmail", "Email"),
    labelComments: option("labelComments", "What happened?"),
    labelClose: option("labelClose", "Close"),
    labelSubmit: option("labelSubmit", "Submit Crash Report"),
    errorGeneric: option("errorGeneric", "An unknown error occurred while submitting your report. Please try again."),
    errorFormEntry: option("errorFormEntry", "Some fields were invalid. Please correct the errors and try again."),
    successMessage: option("successMessage", "Your feedback has been sent. Thank you!")
  };
  function el(tag, css, content) {
    var node = document.createElement(tag);
    if (css) { node.style.cssText = css; }
    if (content) { node.textContent = content; }
    return node;
  }
  function field(id, label, type, value) {
    var wrap = el("p", "margin:0 0 12px");
    var lab = el("label", "display:block;font-weight:600;margin-bottom:4px", label);
    lab.htmlFor = id;
    var input = el(type === "textarea" ? "textarea" : "input",
      "box-sizing:border-box;width:100%;padding:8px;border:1px solid #c7cbd1;border-radius:4px;font:inherit");
    input.id = id;
    input.name = id.replace("sentry-dialog-", "");
    if (type !== "textarea") { input.type = type; } else { input.rows = 5; }
    if (value) { input.value = value; }
    input.required = true;
    wrap.appendChild(lab);
    wrap.appendChild(input);
    return wrap;
  }
  var overlay = el("div", "position:fixed;inset:0;background:rgba(0,0,0,.45);z-index:2147483646;" +
    "display:flex;align-items:center;justify-content:center;font:14px/1.4 system-ui,sans-serif;color:#1f2328");
  overlay.className = "sentry-error-embed-wrapper";
  var dialog = el("div", "background:#fff;max-width:520px;width:calc(100% - 32px);border-radius:8px;" +
    "padding:24px;box-shadow:0 8px 32px rgba(0,0,0,.3)");
  dialog.className = "sentry-error-embed";
  dialog.setAttribute("role", "dialog");
  dialog.setAttribute("aria-modal", "true");
  dialog.appendChild(el("h2", "margin:0 0 8px;font-size:20px", text.title));
  dialog.appendChild(el("p", "margin:0 0 16px;color:#57606a", text.subtitle + " " + text.subtitle2));
  var form = el("form", "");
  form.appendChild(field("sentry-dialog-name", text.labelName, "text", params.get("name")));
  form.appendChild(field("sentry-dialog-email", text.labelEmail, "email", params.get("email")));
  form.appendChild(field("sentry-dialog-comments", text.labelComments, "textarea", ""));
  var status = el("p", "margin:0 0 12px;color:#cf222e");
  status.setAttribute("role", "status");
  form.appendChild(status);
  var actions = el("p", "margin:0;display:flex;gap:8px;justify-content:flex-end");
  var close = el("button", "padding:8px 14px;border:1px solid #c7cbd1;background:#f6f8fa;border-radius:4px;cursor:pointer", text.labelClose);
  close.type = "button";
  var submit = el("button", "padding:8px 14px;border:0;background:#6c5fc7;color:#fff;border-radius:4px;cursor:pointer", text.labelSubmit);
  submit.type = "submit";
  actions.appendChild(close);
  actions.appendChild(submit);
  form.appendChild(actions);
  dialog.appendChild(form);
  overlay.appendChild(dialog);
  function dismiss() {
    if (overlay.parentNode) { overlay.parentNode.removeChild(overlay); }
    window.postMessage("__sentry_reportdialog_closed__", "*");
  }
  close.addEventListener("click", dismiss);
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    submit.disabled = true;
    status.textContent = "";
    var body = new URLSearchParams(new FormData(form));
    fetch(endpoint, { method: "POST", body: body }).then(function (response) {
      if (response.ok) {
        form.textContent = "";
        var done = el("p", "margin:0 0 16px;color:#1a7f37", text.successMessage);
        done.className = "sentry-dialog-success";
        form.appendChild(done);
        var ok = el("button", "padding:8px 14px;border:0;background:#6c5fc7;color:#fff;border-radius:4px", text.labelClose);
        ok.type = "button";
        ok.addEventListener("click", dismiss);
        form.appendChild(ok);
        return;
      }
      status.textContent = response.status === 400 ? text.errorFormEntry : text.errorGeneric;
      return response.json().then(function (answer) {
        if (answer && answer.detail) { status.textContent += " (" + answer.detail + ")"; }
      });
    }).catch(function () {
      status.textContent = text.errorGeneric;
    }).then(function () { submit.disabled = false; });
  });
  document.body.appendChild(overlay);
})();
