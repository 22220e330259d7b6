// The SQL editor (dashboards/routers/sql_editor.py): Ctrl+Enter (or Cmd+Enter) runs the statement, and a click
// on a table's or column's name in the list puts it at the cursor. The form posts as without this script.
(function () {
  "use strict";
  document.addEventListener("DOMContentLoaded", function () {
    var text = document.getElementById("sql-text");
    var form = document.getElementById("sql-form");
    if (!text || !form) { return; }
    text.addEventListener("keydown", function (event) {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    document.querySelectorAll(".sql-insert").forEach(function (name) {
      name.addEventListener("click", function (event) {
        event.preventDefault();
        var word = name.getAttribute("data-insert") || "";
        var start = text.selectionStart, end = text.selectionEnd;
        text.value = text.value.slice(0, start) + word + text.value.slice(end);
        text.selectionStart = text.selectionEnd = start + word.length;
        text.focus();
      });
    });
  });
})();
