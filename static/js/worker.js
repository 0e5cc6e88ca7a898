// Keyboard shortcuts (and their off switch), the "complete before submit" hint, what is
// read aloud after a click, the warning before the lease runs out, and round-to-round
// swaps on a worker's pages. The page works without this script: the server saves and
// checks every answer, and the form posts as a plain form.
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
    form.querySelector("[data-remaining]").textContent = remainingText(missing.length);
    items(form).forEach(function (item) { markMissing(item, missing.indexOf(item) >= 0); });
    if (!missing.length) { form.querySelector("[data-missing-alert]").textContent = ""; }
  }

  function remainingText(count) {
    return count
      ? count + " edited version" + (count > 1 ? "s" : "") + " still to answer"
      : "All answered";
  }

  // What a counterfactual still lacks, in words; "" when it is complete.
  function lacking(item) {
    var valid = answered(item, "valid-");
    var label = answered(item, "label-");
    if (!valid && !label) { return "Choose Valid or Invalid, and a label."; }
    if (!valid) { return "Choose Valid or Invalid."; }
    return label ? "" : "Choose a label.";
  }

  // Marks an unanswered counterfactual in words as well as in colour, and each question it
  // lacks as invalid for assistive technology; unmarks it once it is answered. Only once
  // the worker tried to submit (`flag`), or to take the mark away: never while they work.
  function markMissing(item, flag) {
    var note = item.querySelector("[data-missing-note]");
    var shown = item.classList.contains("cf-missing");
    if (!flag && !shown) { return; }
    var text = flag ? lacking(item) : "";
    item.classList.toggle("cf-missing", text !== "");
    if (note) { note.textContent = text; }
    ["valid", "label"].forEach(function (group) {
      var element = item.querySelector('[data-group="' + group + '"]');
      if (!element) { return; }
      if (text && !answered(item, group + "-")) {
        element.setAttribute("aria-invalid", "true");
        element.setAttribute("aria-describedby", note.id);
      } else {
        element.removeAttribute("aria-invalid");
        element.removeAttribute("aria-describedby");
      }
    });
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
    showShortcuts();
    refresh(form);
    markCurrent(form, incomplete(form)[0] || items(form)[0]);
  }

  // True when every counterfactual is answered; otherwise says which are not, marks them
  // and moves to the first.
  function readyToSubmit(form) {
    var missing = incomplete(form);
    if (!missing.length) { return true; }
    missing.forEach(function (item) { markMissing(item, true); });
    var numbers = missing.map(function (item) { return items(form).indexOf(item) + 1; });
    var listed = numbers.length === 1 ? "Edited version " + numbers[0] + " still needs"
      : "Edited versions " + numbers.slice(0, -1).join(", ") + " and " +
        numbers[numbers.length - 1] + " still need";
    say(form.querySelector("[data-missing-alert]"), listed + " an answer before you submit.");
    focusItem(form, missing[0]);
    return false;
  }

  // A choice's words, without its key hint.
  function choiceName(input) {
    return Array.prototype.filter.call(input.closest("label").childNodes, function (node) {
      return node.nodeType === Node.TEXT_NODE;
    }).map(function (node) { return node.textContent; }).join(" ").replace(/\s+/g, " ").trim();
  }

  // Puts `text` in a live region so that it is read even when it is the same as before.
  function say(region, text) {
    region.textContent = "";
    window.setTimeout(function () { region.textContent = text; }, 50);
  }

  // After a click was saved: one line for assistive technology, in the round's one status
  // region (a status element swapped in already filled is not reliably read).
  function announceSave(form, item) {
    if (item.querySelector(".save-error")) { return; }  // an alert says that itself
    var chosen = Array.prototype.map.call(item.querySelectorAll("input:checked"), choiceName);
    var name = "Edited version " + (items(form).indexOf(item) + 1);
    var still = incomplete(form).length;
    say(form.querySelector("[data-announcer]"), name + ": " + chosen.join(", ") + ", saved. " +
      (lacking(item) || (still ? remainingText(still) + "." : "All answered: you can submit.")));
  }

  // The one-key shortcuts can be turned off (a speech-input or screen-reader user's keys
  // would answer a counterfactual): remembered in this browser where it lets the page
  // store anything (a platform's frame may not), for this page otherwise.
  var SHORTCUTS_STORED = "cfannotate-shortcuts";
  var shortcutsOn = (function () {
    try { return window.localStorage.getItem(SHORTCUTS_STORED) !== "off"; }
    catch (error) { return true; }
  }());

  function showShortcuts() {
    document.body.classList.toggle("shortcuts-off", !shortcutsOn);
    document.querySelectorAll("[data-shortcuts-toggle]").forEach(function (toggle) {
      toggle.hidden = false;
      toggle.querySelector("input").checked = shortcutsOn;
    });
  }

  function setShortcuts(on) {
    shortcutsOn = on;
    try { window.localStorage.setItem(SHORTCUTS_STORED, on ? "on" : "off"); }
    catch (error) { /* kept for this page only */ }
    showShortcuts();
  }

  // The assignment ends after the campaign's lease without any answer: shortly before,
  // the page says so and offers to keep it (WCAG 2.2.1); any answer renews it too. At
  // the end the page reloads, which shows that the assignment ended and what to do.
  var WARN_AT_MOST_SECONDS = 300;
  var lease = { warn: null, end: null, focus: null };

  function leaseBox() {
    return document.querySelector("[data-lease]");
  }

  function leaseSchedule(seconds) {
    var box = leaseBox();
    if (!box) { return; }
    window.clearTimeout(lease.warn);
    window.clearTimeout(lease.end);
    box.hidden = true;
    box.querySelector("[data-lease-text]").textContent = "";
    var before = Math.min(WARN_AT_MOST_SECONDS, Number(box.dataset.leaseMinutes) * 30);
    var endsAt = Date.now() + seconds * 1000;
    lease.warn = window.setTimeout(function () { leaseWarn(box, endsAt); },
      Math.max(0, seconds - before) * 1000);
    lease.end = window.setTimeout(function () { window.location.reload(); },
      (seconds + 2) * 1000);
  }

  function leaseWarn(box, endsAt) {
    var left = (endsAt - Date.now()) / 1000;
    var when = left < 60 ? "In less than a minute"
      : "In about " + Math.round(left / 60) + " minute" + (Math.round(left / 60) > 1 ? "s" : "");
    var at = new Date(endsAt).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    lease.focus = document.activeElement;
    box.hidden = false;
    box.querySelector("[data-lease-text]").textContent = "You have not answered anything " +
      "for a while. " + when + " (at " + at + "), this assignment ends and its rounds go " +
      "to other workers; the rounds you submitted are recorded.";
  }

  function leaseFull() {
    var box = leaseBox();
    if (box) { leaseSchedule(Number(box.dataset.leaseMinutes) * 60); }
  }

  function onKept(event) {
    if (!event.detail.successful) {
      window.location.reload();  // the assignment ended meanwhile: the page says so
      return;
    }
    var back = lease.focus;
    leaseFull();
    if (back && document.contains(back) && back !== document.body) {
      back.focus({ preventScroll: true });
    } else {
      (document.getElementById("round-title") || document.getElementById("main")).focus();
    }
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
    if (!shortcutsOn) { return; }
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
    if (event.target.closest("[data-shortcuts-toggle]")) { setShortcuts(event.target.checked); }
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
    var elt = event.detail.elt;
    if (elt === sending) { sending = null; }
    if (elt.matches && elt.matches("[data-lease-keep]")) { onKept(event); return; }
    if (!event.detail.successful) { return; }
    leaseFull();  // every answer renews the lease
    // A click saved (its status is swapped in by now): say so, since the status shown
    // beside the counterfactual is not read.
    var form = roundForm();
    if (form && elt.matches && elt.matches("[data-item]") && form.contains(elt)) {
      announceSave(form, elt);
    }
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
    showShortcuts();
    var box = leaseBox();
    if (box) { leaseSchedule(Number(box.dataset.leaseSeconds)); }
  });
})();
