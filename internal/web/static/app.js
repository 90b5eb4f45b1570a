// tuitbot review page: the live weighted count of the edit box, the Edit
// toggles, new queue items without a reload (with the counts that go with
// them) and keyboard review. Everything else works without this file.
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
      var acct = area.getAttribute("data-account");
      var tool = area.getAttribute("data-tool");
      var q = "/count?text=" + encodeURIComponent(area.value) + (acct ? "&account=" + encodeURIComponent(acct) : "") +
        (tool ? "&tool=" + encodeURIComponent(tool) : "");
      fetch(BASE + q, { credentials: "same-origin" })
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

  function toggleEdit(b) {
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
  }

  function wire(root) {
    root.querySelectorAll("textarea[data-count]").forEach(liveCount);
    root.querySelectorAll("button.edit-toggle").forEach(function (b) {
      b.addEventListener("click", function () { toggleEdit(b); });
    });
  }

  // bump adds one to a filter's choice, adding the choice if it is new.
  function bump(selectID, value, label) {
    var sel = document.getElementById(selectID);
    if (!sel || !value) return;
    var opt = Array.prototype.find.call(sel.options, function (o) { return o.value === value; });
    if (!opt) {
      opt = new Option("", value);
      opt.setAttribute("data-label", label || value);
      opt.setAttribute("data-n", "0");
      sel.add(opt);
    }
    var n = Number(opt.getAttribute("data-n")) + 1;
    opt.setAttribute("data-n", String(n));
    opt.textContent = opt.getAttribute("data-label") + " (" + n + ")";
  }

  // counted brings the total, the footer and the filters' counts up to
  // date with newly added items.
  function counted(added) {
    var total = document.getElementById("pending-total");
    if (total) total.textContent = String(Number(total.textContent) + added.length);
    var range = document.getElementById("pager-range");
    if (range) {
      var off = Number(range.getAttribute("data-offset"));
      var shown = Number(range.getAttribute("data-shown")) + added.length;
      var all = Number(range.getAttribute("data-total")) + added.length;
      range.setAttribute("data-shown", String(shown));
      range.setAttribute("data-total", String(all));
      range.textContent = "items " + (off + 1) + "–" + (off + shown) + " of " + all;
      range.hidden = false;
    }
    added.forEach(function (li) {
      bump("filter-tool", li.getAttribute("data-tool"), li.getAttribute("data-tool-label"));
      bump("filter-caller", li.getAttribute("data-caller"), li.getAttribute("data-caller"));
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
          var added = [];
          tpl.content.querySelectorAll("li.item").forEach(function (li) {
            if (document.getElementById(li.id)) return;
            list.appendChild(li);
            wire(li);
            list.setAttribute("data-last-id", li.getAttribute("data-id"));
            added.push(li);
          });
          if (added.length) {
            var empty = document.getElementById("empty");
            if (empty) empty.remove();
            counted(added);
          }
        })
        .finally(function () { busy = false; });
    }
    var es = new EventSource(BASE + "/events?after=" + last + filt);
    es.addEventListener("pending", fetchNew);
  }

  // Keyboard review: j/k move between items, a approves, r rejects and e
  // edits the focused one, ? shows the keys. Decisions submit the item's
  // own form, CSRF token and all, as its buttons do.
  function toggleKeys() {
    var keys = document.getElementById("keys");
    if (!keys) return;
    keys.hidden = !keys.hidden;
    document.querySelectorAll(".keys-toggle").forEach(function (b) { b.setAttribute("aria-expanded", String(!keys.hidden)); });
  }

  function keyboard() {
    document.querySelectorAll(".keys-toggle").forEach(function (b) { b.addEventListener("click", toggleKeys); });
    document.addEventListener("keydown", function (ev) {
      if (ev.ctrlKey || ev.metaKey || ev.altKey || ev.defaultPrevented) return;
      var t = ev.target;
      if (t.closest && t.closest("input, textarea, select, [contenteditable]")) return;
      var items = Array.prototype.slice.call(document.querySelectorAll(".items li.item"));
      var cur = document.activeElement && document.activeElement.closest ? document.activeElement.closest("li.item") : null;
      var i = items.indexOf(cur);
      function go(n) {
        var li = items[Math.max(0, Math.min(items.length - 1, n))];
        if (!li) return;
        li.focus();
        li.scrollIntoView({ block: "nearest" });
      }
      function submit(sel) {
        var f = cur && cur.querySelector(sel);
        if (f) f.requestSubmit();
      }
      switch (ev.key) {
        case "j": go(i < 0 ? 0 : i + 1); break;
        case "k": go(i < 0 ? 0 : i - 1); break;
        case "a": submit("form.approve"); break;
        case "r": submit("form.reject"); break;
        case "e":
          var b = cur && cur.querySelector("button.edit-toggle");
          if (!b) return;
          toggleEdit(b);
          break;
        case "?": toggleKeys(); break;
        default: return;
      }
      ev.preventDefault();
    });
    // A decision returns to the item that took the decided one's place:
    // the keyboard goes on from there.
    var m = /^#item-\d+$/.exec(location.hash);
    var at = m && document.getElementById(location.hash.slice(1));
    if (at) at.focus();
  }

  // Drag an unscheduled draft onto a free queue slot: this fills in the
  // slot's own form (the one that works without this file) and sends it.
  function dragToSlots() {
    var list = document.getElementById("unscheduled");
    var slots = document.querySelectorAll(".slot-free form.slot-form");
    if (!list || !slots.length) return;
    Array.prototype.forEach.call(list.querySelectorAll("article.draft"), function (a) {
      var id = a.id.replace(/^draft-/, "");
      a.setAttribute("draggable", "true");
      a.addEventListener("dragstart", function (ev) {
        ev.dataTransfer.setData("text/plain", id);
        ev.dataTransfer.effectAllowed = "move";
      });
    });
    Array.prototype.forEach.call(slots, function (f) {
      var box = f.closest(".slot-free");
      box.addEventListener("dragover", function (ev) {
        ev.preventDefault();
        box.classList.add("drop-over");
      });
      box.addEventListener("dragleave", function () { box.classList.remove("drop-over"); });
      box.addEventListener("drop", function (ev) {
        ev.preventDefault();
        box.classList.remove("drop-over");
        var id = ev.dataTransfer.getData("text/plain");
        var sel = f.querySelector("select[name=draft_id]");
        if (!/^\d+$/.test(id) || !sel) return;
        sel.value = id;
        if (sel.value === id) f.requestSubmit();
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    wire(document);
    listen();
    keyboard();
    dragToSlots();
  });
})();
