// The quality report (#quality-report) polls every 20 s while the campaign is labeling. This
// script makes that refresh one a researcher controls and hears (WCAG 2.2.2, 4.1.3):
// - a tick box pauses it, remembered in this browser (localStorage); a paused poll is
//   cancelled before it is sent. "Run quality control now" is a form of its own and runs;
// - the status line next to it says when the report last changed, or what the run did.
//   The report is no live region: read out at each swap, it said everything or nothing.
// The focus stays where it was through htmx, which focuses the control with the focused
// one's id in the report it swaps in (every control there has one), and keep_open.js
// reopens the tables that were open. Without script nothing polls, so the box stays hidden.
(function () {
  "use strict";

  var STORAGE_KEY = "cfannotate.quality.autoRefresh";
  var control = document.getElementById("auto-refresh-control");
  var box = document.getElementById("auto-refresh");
  var status = document.getElementById("report-status");
  var refreshing = true;
  var before = null;

  try {
    refreshing = window.localStorage.getItem(STORAGE_KEY) !== "off";
  } catch (error) {
    // Storage blocked: the box still pauses, for this page only.
  }

  if (control && box) {
    box.checked = refreshing;
    control.hidden = false;
    box.addEventListener("change", function () {
      refreshing = box.checked;
      try {
        window.localStorage.setItem(STORAGE_KEY, refreshing ? "on" : "off");
      } catch (error) {
        // Not remembered; paused all the same.
      }
    });
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    if (!refreshing && event.detail.elt.id === "quality-report") {
      event.preventDefault();
    }
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    var target = event.detail.target;
    before = target && target.id === "quality-report" ? target.textContent : null;
  });

  // With hx-swap="outerHTML" the event comes from the new report itself.
  document.addEventListener("htmx:afterSwap", function (event) {
    if (!status || event.target.id !== "quality-report") {
      return;
    }
    var message = event.target.getAttribute("data-message");
    if (message) {
      status.textContent = message;
    } else if (event.target.textContent !== before) {
      status.textContent = "Report updated " + new Date().toLocaleTimeString();
    }
    before = null;
  });
})();
