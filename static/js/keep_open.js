// A block that htmx swaps again (the quality report refreshes every 20 s) keeps the
// <details> the researcher opened in it open: each one with an id is opened again in the
// new block. Without script the page has no refresh, so nothing to keep.
(function () {
  "use strict";

  var opened = [];

  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    opened = target ? Array.prototype.map.call(
      target.querySelectorAll("details[id][open]"), function (details) { return details.id; }
    ) : [];
  });

  document.addEventListener("htmx:afterSwap", function () {
    opened.forEach(function (id) {
      var details = document.getElementById(id);
      if (details) {
        details.open = true;
      }
    });
    opened = [];
  });
})();
