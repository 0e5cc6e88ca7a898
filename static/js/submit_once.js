// A plain form marked `data-submit-once` (creating a campaign) disables its submit buttons
// once sent, so a double click sends it once. The server still takes the form once whatever
// arrives (its one-time token); this only spares the researcher the second request.
// Coming back to the page (the browser's Back) enables the buttons again.
(function () {
  "use strict";

  function buttons(form) {
    return form.querySelectorAll("button[type=submit], input[type=submit]");
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!form.hasAttribute || !form.hasAttribute("data-submit-once") || event.defaultPrevented) {
      return;
    }
    // After this event: the form's fields are read once it has run, and a disabled
    // button's own name and value would be left out.
    window.setTimeout(function () {
      Array.prototype.forEach.call(buttons(form), function (button) {
        button.disabled = true;
        button.setAttribute("aria-busy", "true");
      });
    }, 0);
  });

  window.addEventListener("pageshow", function () {
    document.querySelectorAll("form[data-submit-once]").forEach(function (form) {
      Array.prototype.forEach.call(buttons(form), function (button) {
        button.disabled = false;
        button.removeAttribute("aria-busy");
      });
    });
  });
})();
