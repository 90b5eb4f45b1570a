// tuitbot review page: the live weighted count of the edit box, the Edit
// toggles and new queue items without a reload. Everything else works
// without this file.
(function () {
  "use strict";

  // The site may be mounted under a path (/ui beside the MCP endpoint).
  var baseMeta = document.querySelector('meta[name="base"]');
  var BASE = baseMeta ? baseMeta.getAttribute("content") : "";

  function debounce(fn, ms) {
    var t;
    return function () {
      var args = arguments, self = this;
      clearTimeout(t);
      t = setTimeout(function () { fn.apply(self, args); }, ms);
    };
  }

  // The count comes from the server, which counts as X does (links weigh
  // 23, CJK and emoji two); a copy of those rules here would drift.
  function liveCount(area) {
    var out = document.getElementById(area.getAttribute("data-count"));
    if (!out) return;
    var seq = 0;
    var update = debounce(function () {
      var mine = ++seq;
      fetch(BASE + "/count?text=" + encodeURIComponent(area.value), { credentials: "same-origin" })
        .then(function (r) { return r.json(); })
        .then(function (c) {
          if (mine !== seq) return;
          out.textContent = c.weighted_length + "/" + c.max;
          out.classList.toggle("over", !c.valid);
          out.setAttribute("data-count-value", String(c.weighted_length));
        });
    }, 80);
    area.addEventListener("input", update);
  }

  function wire(root) {
    root.querySelectorAll("textarea[data-count]").forEach(liveCount);
    root.querySelectorAll("button.edit-toggle").forEach(function (b) {
      b.addEventListener("click", function () {
        var form = document.getElementById(b.getAttribute("aria-controls"));
        if (!form) return;
        var open = form.hidden;
        form.hidden = !open;
        b.setAttribute("aria-expanded", String(open));
        if (open) {
          // Caret at the end: a reviewer usually adds to the text.
          var area = form.querySelector("textarea");
          area.focus();
          area.setSelectionRange(area.value.length, area.value.length);
        }
      });
    });
  }

  function listen() {
    var list = document.getElementById("items");
    if (!list || !window.EventSource) return;
    var last = list.getAttribute("data-last-id");
    if (last === null || Number(last) < 0) return;
    var filt = "";
    if (list.dataset.tool) filt += "&tool=" + encodeURIComponent(list.dataset.tool);
    if (list.dataset.caller) filt += "&caller=" + encodeURIComponent(list.dataset.caller);
    if (list.dataset.account) filt += "&account=" + encodeURIComponent(list.dataset.account);
    var busy = false;
    function fetchNew() {
      if (busy) return;
      busy = true;
      fetch(BASE + "/approvals/new?after=" + list.getAttribute("data-last-id") + filt, { credentials: "same-origin" })
        .then(function (r) { return r.text(); })
        .then(function (html) {
          var tpl = document.createElement("template");
          tpl.innerHTML = html;
          var added = tpl.content.querySelectorAll("li.item");
          added.forEach(function (li) {
            if (document.getElementById(li.id)) return;
            list.appendChild(li);
            wire(li);
            list.setAttribute("data-last-id", li.getAttribute("data-id"));
          });
          if (added.length) {
            var empty = document.getElementById("empty");
            if (empty) empty.remove();
            var total = document.getElementById("pending-total");
            if (total) total.textContent = String(Number(total.textContent) + added.length);
          }
        })
        .finally(function () { busy = false; });
    }
    var es = new EventSource(BASE + "/events?after=" + last + filt);
    es.addEventListener("pending", fetchNew);
  }

  document.addEventListener("DOMContentLoaded", function () {
    wire(document);
    listen();
  });
})();
