/**
 * The one script of the checkout pages, served same-origin (the pages' CSP allows only 'self'):
 * on the bank-transfer page it ticks the countdown, turns on the copy control, and asks the
 * session's status route every 3 seconds, reloading the page when the answer's `data.version` differs
 * from the page's (the transfer settled, was returned, or the time ran out). The page works
 * without it (a refresh every 15 seconds and a "check the status" link).
 */
export const TRANSFER_SCRIPT = `(function () {
  "use strict";
  var root = document.querySelector("[data-status-url]");
  if (!root) return;
  var statusUrl = root.getAttribute("data-status-url");
  var version = root.getAttribute("data-version");
  var secondsLeft = Number(root.getAttribute("data-seconds-left")) || 0;
  var started = Date.now();
  var countdown = document.getElementById("countdown");
  var reloading = false;

  function remaining() {
    return Math.max(0, Math.round(secondsLeft - (Date.now() - started) / 1000));
  }
  function tick() {
    if (!countdown) return;
    var s = remaining();
    countdown.textContent = Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }
  function poll() {
    if (reloading) return;
    fetch(statusUrl, { cache: "no-store", headers: { accept: "application/json" } })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (body) {
        if (body && body.data && body.data.version !== version) {
          reloading = true;
          location.reload();
        }
      })
      .catch(function () {});
  }
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    var field = document.createElement("textarea");
    field.value = text;
    field.setAttribute("readonly", "");
    field.style.position = "absolute";
    field.style.left = "-9999px";
    document.body.appendChild(field);
    field.select();
    var ok = document.execCommand("copy");
    document.body.removeChild(field);
    return ok ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }
  Array.prototype.forEach.call(document.querySelectorAll("button[data-copy]"), function (button) {
    var label = button.textContent;
    var status = document.getElementById("copy-status");
    button.hidden = false;
    button.addEventListener("click", function () {
      copyText(button.getAttribute("data-copy")).then(
        function () {
          button.textContent = "Copied";
          if (status) status.textContent = "Account number copied";
          setTimeout(function () { button.textContent = label; }, 2000);
        },
        function () {
          if (status) status.textContent = "Select the account number to copy it";
        }
      );
    });
  });
  tick();
  setInterval(tick, 1000);
  setInterval(poll, 3000);
})();
`;
