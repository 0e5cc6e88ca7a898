// Keyboard shortcuts, the "complete before submit" hint and round-to-round swaps on a
// worker's round. The page works without this script: the server saves and checks every
// answer, and the form posts as a plain form.
//
// htmx submits the round and swaps the next one into <main>, so every listener here is
// on the document and looks the current form up when it runs.
(function () {
  "use strict";

  var NOT_SENT = "Not sent: the server could not be reached. Your answers are kept " +
    "in the page; try again.";

  function roundForm() {
    return document.querySelector("[data-round-form]");
  }

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

  // True when every counterfactual is answered; otherwise marks the missing ones.
  function readyToSubmit(form) {
    var missing = incomplete(form);
    missing.forEach(function (item) { item.classList.add("cf-missing"); });
    if (missing.length) { focusItem(missing[0]); }
    return missing.length === 0;
  }

  function onKey(event) {
    var form = roundForm();
    if (!form || event.ctrlKey || event.metaKey || event.altKey) { return; }
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
  }

  // Where a request that got no answer says so: the round's line for the submit, the
  // counterfactual's status for a click (the submit sends that answer again anyway).
  // A 4xx carries its own message, which htmx swaps in; only 5xx and no answer come here.
  function onFailure(event) {
    var form = roundForm();
    var source = event.detail.elt;
    var xhr = event.detail.xhr;
    if (!form || !form.contains(source) || (xhr && xhr.status > 0 && xhr.status < 500)) { return; }
    var status = source === form
      ? form.querySelector("[data-remaining]")
      : source.querySelector(".save-status");
    if (status) { status.textContent = NOT_SENT; }
  }

  document.addEventListener("change", function (event) {
    var form = roundForm();
    if (form && form.contains(event.target)) { refresh(form); }
  });
  // Without htmx the browser posts the form; with it, htmx asks first (beforeRequest).
  document.addEventListener("submit", function (event) {
    if (event.target === roundForm() && !readyToSubmit(event.target)) { event.preventDefault(); }
  });
  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = roundForm();
    if (form && event.detail.elt === form && !readyToSubmit(form)) { event.preventDefault(); }
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    var form = roundForm();
    if (event.detail.target.id !== "main") { return; }
    if (form) { refresh(form); }
    // The next round (or the error in its place) is new content: start reading there.
    var heading = document.getElementById("round-title");
    (heading || event.detail.target).focus({ preventScroll: true });
  });
  document.addEventListener("htmx:responseError", onFailure);
  document.addEventListener("htmx:sendError", onFailure);
  document.addEventListener("keydown", onKey);
  document.addEventListener("DOMContentLoaded", function () {
    var form = roundForm();
    if (form) { refresh(form); }
  });
})();
