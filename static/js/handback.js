// Hands a finished assignment back to its crowd platform a few seconds after the
// completion page shows: submits the MTurk form, or follows the Prolific link. The page
// says so and offers to stay (WCAG 2.2.1: the worker can turn the time limit off), and
// the button does the same by hand. The page works without this script.
(function () {
  "use strict";

  var DELAY_SECONDS = 10;

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
    var stay = document.querySelector("[data-handback-stay]");
    if (status) {
      status.textContent = "Sending your work to the platform in " + DELAY_SECONDS +
        " seconds.";
    }
    if (target.tagName === "FORM") {
      target.addEventListener("submit", function () {
        target.dataset.sent = "1";
      });
    }
    var timer = window.setTimeout(handBack, DELAY_SECONDS * 1000);
    if (stay) {
      stay.hidden = false;
      stay.querySelector("button").addEventListener("click", function () {
        window.clearTimeout(timer);
        stay.hidden = true;
        if (status) {
          status.textContent = "You stay on this page: use the button above when you are ready.";
        }
        // The hand-back button: the form's, or the link itself.
        (target.querySelector("button") || target).focus();
      });
    }
  });
})();
