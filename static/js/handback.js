// Hands a finished assignment back to its crowd platform a moment after the completion
// page shows: submits the MTurk form, or follows the Prolific link. The button does the
// same by hand, and the page works without this script.
(function () {
  "use strict";

  var DELAY_MS = 2000;

  function handBack() {
    var target = document.querySelector("[data-handback]");
    if (!target || target.dataset.sent) {
      return;
    }
    target.dataset.sent = "1";
    if (target.tagName === "FORM") {
      target.submit();
    } else {
      window.location.assign(target.href);
    }
  }

  document.addEventListener("DOMContentLoaded", function () {
    var target = document.querySelector("[data-handback]");
    if (!target) {
      return;
    }
    var status = document.querySelector("[data-handback-status]");
    if (status) {
      status.textContent = "Sending your work to the platform in a moment…";
    }
    if (target.tagName === "FORM") {
      target.addEventListener("submit", function () {
        target.dataset.sent = "1";
      });
    }
    window.setTimeout(handBack, DELAY_MS);
  });
})();
