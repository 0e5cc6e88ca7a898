// What a researcher's page says when an htmx request fails outside a view's own error
// fragment: a whole error page (Django's, or the debug page) is never swapped into a
// block, the server unreachable is said in words, and the page stays as it was.
// Worker pages have their own handling (worker.js).
(function () {
  "use strict";

  function wholeDocument(text) {
    return /<html[\s>]|<!doctype/i.test(text || "");
  }

  function say(text) {
    var main = document.getElementById("main");
    if (!main || workerPage()) {
      return;
    }
    var notice = document.getElementById("request-problem");
    if (!notice) {
      notice = document.createElement("div");
      notice.id = "request-problem";
      notice.className = "error";
      notice.setAttribute("role", "alert");
      main.insertBefore(notice, main.firstChild);
    }
    notice.textContent = text;  // text, never markup
    notice.scrollIntoView({ block: "nearest" });
  }

  function explain(status) {
    if (status === 401 || status === 403) {
      return "The server refused that (" + status + "): you may have been logged out. " +
        "Reload the page, log in again if asked, and try again.";
    }
    return "The server could not do that (error " + status + "). Nothing on this page " +
      "changed: reload it and try again; if it happens again, the server's log says why.";
  }

  function workerPage() {
    return document.body.classList.contains("worker");
  }

  document.addEventListener("htmx:beforeSwap", function (event) {
    var detail = event.detail;
    if (workerPage()) {
      return;
    }
    var status = detail.xhr ? detail.xhr.status : 0;
    if (status >= 400 && wholeDocument(detail.xhr.responseText)) {
      detail.shouldSwap = false;
      detail.isError = true;
      say(explain(status));
    }
  });

  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    // 4xx fragments say what was wrong where they are swapped in; a 5xx is said here.
    if (xhr && xhr.status >= 500) {
      say(explain(xhr.status));
    }
  });

  document.addEventListener("htmx:sendError", function () {
    say("The server could not be reached: nothing was changed. Check the connection and try again.");
  });
})();
