// The panel's only script: JSON actions with the CSRF token, and a few keys.
// Server replies are shown with textContent, never parsed as HTML.
(function () {
  "use strict";
  var csrf = document.querySelector('meta[name="csrf"]').getAttribute("content");

  function toast(text, bad) {
    var t = document.getElementById("toast");
    t.textContent = text;
    t.className = bad ? "show bad" : "show";
    clearTimeout(toast.timer);
    toast.timer = setTimeout(function () { t.className = ""; }, bad ? 8000 : 3000);
  }

  function send(action, body, el) {
    if (el) { el.setAttribute("aria-busy", "true"); }
    return fetch("/panel/action/" + encodeURIComponent(action), {
      method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-Palimpsest-CSRF": csrf},
      body: JSON.stringify(body)
    }).then(function (r) {
      return r.json().catch(function () { return {ok: false, error: {message: "HTTP " + r.status}}; });
    }).then(function (reply) {
      if (el) { el.removeAttribute("aria-busy"); }
      if (!reply.ok) { toast((reply.error && reply.error.message) || "failed", true); return null; }
      return reply.result;
    }, function (err) {
      if (el) { el.removeAttribute("aria-busy"); }
      toast("network error: " + err, true);
      return null;
    });
  }

  function done(el, result) {
    if (result === null) { return; }
    var follow = el.getAttribute("data-follow");
    if (follow && result && result.id) { location.href = follow + encodeURIComponent(result.id); return; }
    sessionStorage.setItem("palimpsest-toast", "Saved.");
    location.reload();
  }

  document.addEventListener("click", function (e) {
    var b = e.target.closest("button[data-action]");
    if (!b) { return; }
    var body = {};
    Object.keys(b.dataset).forEach(function (k) { if (k !== "action") { body[k] = b.dataset[k]; } });
    b.disabled = true;
    send(b.dataset.action, body, b).then(function (r) { b.disabled = false; done(b, r); });
  });

  document.addEventListener("submit", function (e) {
    var f = e.target;
    if (!f.matches("form[data-action]")) { return; }
    e.preventDefault();
    var confirmText = f.getAttribute("data-confirm");
    if (confirmText && !window.confirm(confirmText)) { return; }
    var body = {};
    new FormData(f).forEach(function (v, k) { body[k] = String(v); });
    var empty = Object.keys(body).filter(function (k) { var i = f.elements[k]; return i && i.required && !body[k].trim(); });
    if (empty.length) { toast("Fill in " + empty.join(", "), true); return; }
    send(f.getAttribute("data-action"), body, f).then(function (r) { done(f, r); });
  });

  document.addEventListener("keydown", function (e) {
    var typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
    if (e.key === "/" && !typing) {
      var q = document.getElementById("q") || document.getElementById("jump-id");
      if (q) { e.preventDefault(); q.focus(); q.select(); }
    } else if (e.key === "Escape" && typing) {
      document.activeElement.blur();
    }
  });

  var pending = sessionStorage.getItem("palimpsest-toast");
  if (pending) { sessionStorage.removeItem("palimpsest-toast"); toast(pending, false); }
  if (location.hash) {
    var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (target) { target.focus({preventScroll: false}); }
  }
})();
