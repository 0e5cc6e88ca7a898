// The crowd block of the campaign page answers a refused action with a 4xx fragment that
// says why; htmx does not swap error responses by default, so let this block's through.
(function () {
  "use strict";
  document.addEventListener("htmx:beforeSwap", function (event) {
    var detail = event.detail;
    var target = detail.target;
    var status = detail.xhr ? detail.xhr.status : 0;
    if (status >= 400 && status < 600 && target && target.id === "platforms-block") {
      detail.shouldSwap = true;
      detail.isError = false;
    }
  });
})();
