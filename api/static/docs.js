// Starts Swagger UI on /docs. A file, not an inline script, so the page keeps the strict CSP (script-src 'self').
window.addEventListener("DOMContentLoaded", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-openapi-url"),
    dom_id: "#swagger-ui",
    deepLinking: true,
    // Each tag opens collapsed: the document holds over a hundred operations, and drawing them all expanded
    // at once stopped part way (only the first tags were drawn).
    docExpansion: "none",
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
