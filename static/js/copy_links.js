// Every read-only link field (invitation links, platform entry URLs, personal links, a new
// API token) gets a Copy button beside it, on the page and in blocks htmx swaps in.
// Without script the field still selects and copies by hand.
(function () {
  "use strict";

  function say(button, text) {
    button.textContent = text;
    window.setTimeout(function () { button.textContent = "Copy"; }, 2000);
  }

  function copy(field, button) {
    field.focus();
    field.select();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(
        function () { say(button, "Copied"); },
        function () { say(button, "Press Ctrl+C"); }
      );
      return;
    }
    // Plain http on another host: the old command still copies the selection.
    say(button, document.execCommand("copy") ? "Copied" : "Press Ctrl+C");
  }

  function addButtons(root) {
    root.querySelectorAll("input.link-field[readonly]").forEach(function (field) {
      if (field.dataset.copyButton) {
        return;
      }
      field.dataset.copyButton = "1";
      var button = document.createElement("button");
      button.type = "button";
      button.className = "button button-secondary copy-button";
      button.textContent = "Copy";
      button.addEventListener("click", function () { copy(field, button); });
      field.insertAdjacentElement("afterend", button);
    });
  }

  document.addEventListener("DOMContentLoaded", function () { addButtons(document); });
  document.addEventListener("htmx:load", function (event) { addButtons(event.detail.elt); });
})();
