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
  var KEYS = /^[jkvx0-9]$/;  // the round's shortcuts besides Enter
  // The round form whose submit is on its way, if any. Kept here, not as a class or an
  // attribute: htmx copies the old form's attributes onto the new one (same id) while the
  // next round settles, which would make that one look as if it were being sent too.
  var sending = null;

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

  // The counterfactual that keys answer: one at a time, marked on the page. It changes
  // only when the worker moves (J / K, Tab, a click or tap on it), never by itself, so a
  // key always lands on the counterfactual the worker sees marked.
  // The mark is aria-current, not a class: htmx settles the classes of swapped-in
  // elements whose ids match the old ones, and would wipe a class set meanwhile.
  function currentItem(form) {
    return form.querySelector('[data-item][aria-current="true"]') || incomplete(form)[0] ||
      items(form)[0];
  }

  function markCurrent(form, item) {
    items(form).forEach(function (each) {
      if (each === item) { each.setAttribute("aria-current", "true"); }
      else { each.removeAttribute("aria-current"); }
    });
  }

  function focusItem(form, item) {
    markCurrent(form, item);
    var target = item.querySelector("input:checked") || item.querySelector("input");
    if (target) { target.focus({ preventScroll: true }); }
    item.scrollIntoView({ block: "nearest" });
  }

  function move(form, step) {
    var list = items(form);
    var index = list.indexOf(currentItem(form)) + step;
    if (index >= 0 && index < list.length) { focusItem(form, list[index]); }
  }

  function choose(form, key) {
    var item = currentItem(form);
    var input = item && item.querySelector('input[data-key="' + key + '"]');
    if (!input) { return; }
    if (!input.checked) { input.click(); }  // fires "change": htmx saves it
    input.focus({ preventScroll: true });
  }

  // A new round on the page (loaded, swapped in, or restored by the Back button).
  function start(form) {
    refresh(form);
    markCurrent(form, incomplete(form)[0] || items(form)[0]);
  }

  // True when every counterfactual is answered; otherwise marks the missing ones.
  function readyToSubmit(form) {
    var missing = incomplete(form);
    missing.forEach(function (item) { item.classList.add("cf-missing"); });
    if (missing.length) { focusItem(form, missing[0]); }
    return missing.length === 0;
  }

  function onKey(event) {
    var form = roundForm();
    if (!form || event.ctrlKey || event.metaKey || event.altKey) { return; }
    var tag = event.target.tagName;
    if (tag === "TEXTAREA" || (tag === "INPUT" && event.target.type === "text")) { return; }
    var key = event.key.toLowerCase();
    // The round is being submitted: a key pressed now is meant for the next round, not for
    // this one (were the submit to fail, it would change an answer the worker sent).
    if (form === sending) {
      if (key === "enter" || KEYS.test(key)) { event.preventDefault(); }
      return;
    }
    if (key === "j") { move(form, 1); }
    else if (key === "k") { move(form, -1); }
    else if (key === "enter" && tag !== "BUTTON" && tag !== "A") {
      event.preventDefault();
      form.requestSubmit();
    }
    else if (key === "v" || key === "x" || /^[0-9]$/.test(key)) { choose(form, key); }
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
  // Whatever the worker clicks, taps or tabs to becomes the counterfactual keys answer.
  function follow(event) {
    var form = roundForm();
    var item = event.target.closest && event.target.closest("[data-item]");
    if (form && item && form.contains(item)) { markCurrent(form, item); }
  }
  document.addEventListener("pointerdown", follow);
  document.addEventListener("focusin", follow);
  // History restores swap too, with no target in their details.
  document.addEventListener("htmx:afterSwap", function (event) {
    var form = roundForm();
    if (!event.detail.target || event.detail.target.id !== "main") { return; }
    if (form) { start(form); }
    // The next round (or the error in its place) is new content: start reading there.
    var heading = document.getElementById("round-title");
    (heading || event.detail.target).focus({ preventScroll: true });
  });
  document.addEventListener("htmx:beforeSend", function (event) {
    if (event.detail.elt === roundForm()) { sending = event.detail.elt; }
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail.elt === sending) { sending = null; }
  });
  document.addEventListener("htmx:responseError", onFailure);
  document.addEventListener("htmx:sendError", onFailure);
  document.addEventListener("keydown", onKey);
  // Back or Forward to a round: the server sends the page as it is now (htmx does not
  // keep copies of round pages), which may be the next round if that one was submitted.
  document.addEventListener("htmx:historyRestore", function () {
    var form = roundForm();
    if (!form) { return; }
    start(form);
    // The address names the round on the page, so a reload stays where the worker is.
    if (location.pathname !== form.dataset.roundUrl) {
      history.replaceState(history.state, "", form.dataset.roundUrl);
    }
  });
  document.addEventListener("DOMContentLoaded", function () {
    var form = roundForm();
    if (form) { start(form); }
  });
})();
