// The replay page: fetch the recording, start rrweb-player (vendored) a few seconds before the error the
// link came from, place the timeline's marks, and seek when a mark or a breadcrumb is clicked.
// No inline script or style: positions are set through the CSSOM, which the CSP allows.
(function () {
  "use strict";
  var root = document.getElementById("replay-player");
  if (!root) { return; }
  var duration = parseFloat(root.dataset.duration) || 0;
  var start = parseFloat(root.dataset.start) || 0;
  var player = null;

  function placeMarks() {
    var marks = document.querySelectorAll("#replay-timeline .replay-mark");
    for (var i = 0; i < marks.length; i++) {
      var offset = parseFloat(marks[i].dataset.offset) || 0;
      var share = duration > 0 ? Math.min(1, offset / duration) : 0;
      marks[i].style.left = (share * 100).toFixed(3) + "%";
    }
  }

  function seek(seconds) {
    if (!player) { return; }
    player.goto(Math.max(0, seconds * 1000), false);
  }

  document.addEventListener("click", function (event) {
    var target = event.target.closest ? event.target.closest("[data-offset]") : null;
    if (target) { seek(parseFloat(target.dataset.offset) || 0); }
  });

  placeMarks();
  if (root.dataset.playable !== "1") {
    document.getElementById("replay-loading").textContent = "Nothing to play yet.";
    return;
  }
  fetch(root.dataset.recording, { credentials: "same-origin" })
    .then(function (answer) {
      if (!answer.ok) { throw new Error("the recording answered " + answer.status); }
      return answer.json();
    })
    .then(function (events) {
      // The SDK's own custom events carry seconds; rrweb sorts by milliseconds (see stacklens.replay.recording).
      for (var i = 0; i < events.length; i++) {
        if (events[i].timestamp < 1e11) { events[i].timestamp = Math.round(events[i].timestamp * 1000); }
      }
      var loading = document.getElementById("replay-loading");
      if (loading) { loading.remove(); }
      var width = Math.max(320, Math.min(root.clientWidth || 960, 1200));
      player = new window.rrwebPlayer.Player({
        target: root,
        props: {
          events: events,
          width: width,
          height: Math.round(width * 0.56),
          autoPlay: false,
          showController: true,
          skipInactive: true,
          mouseTail: false
        }
      });
      player.goto(start * 1000, false);
      root.dataset.ready = "1";
    })
    .catch(function (error) {
      var loading = document.getElementById("replay-loading");
      if (loading) { loading.textContent = "The recording could not be loaded: " + error.message; }
      root.dataset.ready = "error";
    });
})();
