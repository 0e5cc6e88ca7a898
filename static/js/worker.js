// Keyboard shortcuts and the "complete before submit" hint on a worker's round.
// The page works without this script: the server saves and checks every answer.
(function () {
  "use strict";

  function items(form) {
    return Array.prototype.slice.call(form.querySelectorAll("[data-item]"));
  }

  function answered(item, prefix) {
    return item.querySelector('input[name^="' + prefix + '"]:checked') !== null;
  }

  function incomplete(form) {
    return items(form).filter(function (item) {
      return !(answered(item, "valid-") && answered(item, "label-"));
    });
  }

  function refresh(form) {
    var missing = incomplete(form);
    var remaining = form.querySelector("[data-remaining]");
    var button = form.querySelector("[data-submit]");
    button.setAttribute("aria-disabled", missing.length ? "true" : "false");
    remaining.textContent = missing.length
      ? missing.length + " edited version" + (missing.length > 1 ? "s" : "") + " still to answer"
      : "All answered";
  }

  function currentItem(form) {
    var focused = document.activeElement && document.activeElement.closest("[data-item]");
    return focused || incomplete(form)[0] || items(form)[0];
  }

  function focusItem(item) {
    var target = item.querySelector("input:checked") || item.querySelector("input");
    if (target) { target.focus(); }
    item.scrollIntoView({ block: "nearest" });
  }

  function move(form, step) {
    var list = items(form);
    var index = list.indexOf(currentItem(form)) + step;
    if (index >= 0 && index < list.length) { focusItem(list[index]); }
  }

  function choose(form, key) {
    var item = currentItem(form);
    var input = item && item.querySelector('input[data-key="' + key + '"]');
    if (!input) { return; }
    if (!input.checked) { input.click(); }  // fires "change": htmx saves it
    input.focus();
    if (answered(item, "valid-") && answered(item, "label-")) {
      var next = incomplete(form)[0];
      if (next) { focusItem(next); }
    }
  }

  function setUp(form) {
    refresh(form);
    form.addEventListener("change", function () { refresh(form); });
    form.addEventListener("submit", function (event) {
      var missing = incomplete(form);
      if (missing.length) {
        event.preventDefault();
        missing.forEach(function (item) { item.classList.add("cf-missing"); });
        focusItem(missing[0]);
      }
    });
    document.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey) { return; }
      var tag = event.target.tagName;
      if (tag === "TEXTAREA" || (tag === "INPUT" && event.target.type === "text")) { return; }
      var key = event.key.toLowerCase();
      if (key === "j") { move(form, 1); }
      else if (key === "k") { move(form, -1); }
      else if (key === "enter" && tag !== "BUTTON" && tag !== "A") {
        event.preventDefault();
        form.requestSubmit();
      }
      else if (key === "v" || key === "x" || /^[1-9]$/.test(key)) { choose(form, key); }
      else { return; }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var form = document.querySelector("[data-round-form]");
    if (form) { setUp(form); }
  });
})();
