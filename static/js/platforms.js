// The crowd block of the campaign page answers a refused action with a 4xx fragment that
// says why; htmx does not swap error responses by default, so let this block's through.
(function () {
  "use strict";
  document.addEventListener("htmx:beforeSwap", function (event) {
    var detail = event.detail;
    var target = detail.target;
    var status = detail.xhr ? detail.xhr.status : 0;
    // Only this block's own fragments: a whole error page (Django's, the debug page) is
    // never swapped into it; request_errors.js says what happened instead.
    var text = detail.xhr ? detail.xhr.responseText || "" : "";
    var fragment = !/<html[\s>]|<!doctype/i.test(text);
    if (status >= 400 && status < 600 && fragment && target && target.id === "platforms-block") {
      detail.shouldSwap = true;
      detail.isError = false;
    }
  });
})();
