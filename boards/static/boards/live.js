// Live updates for a workspace page: a web socket per page tells us *that* something changed;
// we re-fetch the page and swap in its live regions ([data-live] with an id). Channel layers
// deliver at most once, so after every (re)connect the page re-fetches its whole state.
(function () {
  "use strict";

  var status = document.getElementById("weft-live");
  if (!status) return;
  var statusText = status.querySelector(".live-status__text");
  var socketPath = status.dataset.socket;
  var socket = null;
  var retry = 0;
  var timer = null;
  var refreshing = false;
  var again = false;
  var paused = false;

  function setStatus(state, text) {
    status.dataset.state = state;
    statusText.textContent = text;
  }

  // A region is busy while the person is in the middle of something inside it: typing,
  // choosing in a select, an open disclosure, or dragging a card. Its refresh waits.
  function busy(region) {
    if (region.querySelector(".is-dragging")) return true;
    if (region.querySelector("details[open]")) return true;
    var active = document.activeElement;
    if (active && region.contains(active)) {
      var tag = active.tagName;
      if (tag === "SELECT") return true;
      if ((tag === "TEXTAREA" || tag === "INPUT") && active.value) return true;
    }
    return false;
  }

  function swapRegions(html) {
    var doc = new DOMParser().parseFromString(html, "text/html");
    var deferred = false;
    document.querySelectorAll("[data-live][id]").forEach(function (region) {
      var fresh = doc.getElementById(region.id);
      if (!fresh) return;
      if (busy(region)) {
        deferred = true;
        region.dataset.stale = "1";
        return;
      }
      var focusedId = document.activeElement && region.contains(document.activeElement) ? document.activeElement.id : "";
      var imported = document.importNode(fresh, true);
      region.replaceWith(imported);
      if (window.htmx) window.htmx.process(imported);
      if (focusedId) {
        var back = document.getElementById(focusedId);
        if (back) back.focus({ preventScroll: true });
      }
    });
    document.dispatchEvent(new CustomEvent("weft:refreshed", { detail: { deferred: deferred } }));
  }

  function refresh() {
    if (refreshing) { again = true; return; }
    refreshing = true;
    fetch(window.location.href, { headers: { "X-Weft-Refresh": "1" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) { if (html) swapRegions(html); })
      .catch(function () { /* the next event or reconnect re-fetches */ })
      .finally(function () {
        refreshing = false;
        if (again) { again = false; refresh(); }
      });
  }

  // Many events arrive together (a completion writes several); one fetch answers them all.
  function scheduleRefresh() {
    clearTimeout(timer);
    timer = setTimeout(refresh, 80);
  }

  function connect() {
    if (paused) return;
    var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + window.location.host + socketPath);
    socket.onopen = function () {
      var reconnect = retry > 0 || status.dataset.state === "offline";
      retry = 0;
      setStatus("live", "Live");
      if (reconnect) scheduleRefresh();
    };
    socket.onmessage = function (message) {
      var data;
      try { data = JSON.parse(message.data); } catch (e) { return; }
      if (data.type === "event") {
        document.dispatchEvent(new CustomEvent("weft:event", { detail: data }));
        scheduleRefresh();
      }
    };
    socket.onclose = function (event) {
      socket = null;
      if (event.code === 4403) { setStatus("offline", "Not live: sign in again"); return; }
      setStatus("offline", "Reconnecting…");
      retry += 1;
      if (!paused) setTimeout(connect, Math.min(15000, 500 * Math.pow(2, retry - 1)));
    };
  }

  // A deferred region catches up once the person leaves it.
  document.addEventListener("focusout", function () {
    setTimeout(function () {
      if (document.querySelector("[data-live][data-stale]")) scheduleRefresh();
    }, 0);
  });
  document.addEventListener("toggle", function () {
    if (document.querySelector("[data-live][data-stale]")) scheduleRefresh();
  }, true);
  // Server responses (htmx) may ask for a refresh of everything live.
  document.body.addEventListener("weft:refresh", scheduleRefresh);
  // A decided item leaves the list at once in this tab (others hear it from the socket).
  document.body.addEventListener("htmx:afterSwap", function () {
    document.querySelectorAll("[data-remove-item]").forEach(function (notice) {
      var item = document.getElementById("inbox-item-" + notice.dataset.removeItem);
      if (item) {
        var next = item.nextElementSibling || item.previousElementSibling;
        item.remove();
        if (next && next.classList.contains("inbox-item")) next.focus();
      }
      notice.removeAttribute("data-remove-item");
    });
  });

  window.weftLive = {
    refresh: scheduleRefresh,
    pause: function () { paused = true; if (socket) socket.close(); },
    resume: function () { paused = false; connect(); },
    connected: function () { return !!socket && socket.readyState === 1; }
  };
  connect();
})();

// Inbox keyboard shortcuts on the focused item: a accept, r rework, l later, d drop, j/k move.
(function () {
  "use strict";

  function typing(target) {
    var tag = target.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || target.isContentEditable;
  }

  function openDisclosure(item, key) {
    var details = item.querySelector('details[data-key="' + key + '"]');
    if (!details) return false;
    details.open = true;
    var field = details.querySelector("textarea, input:not([type=hidden]), button[type=submit]");
    if (field) field.focus();
    return true;
  }

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    var item = event.target.closest && event.target.closest(".inbox-item");
    if (!item) return;
    var key = event.key.toLowerCase();
    var handled = false;
    if (key === "j" || key === "k") {
      var sibling = key === "j" ? item.nextElementSibling : item.previousElementSibling;
      if (sibling) { sibling.focus(); handled = true; }
    } else if (key === "a") {
      var accept = item.querySelector('button[data-key="a"]');
      if (accept) { accept.click(); handled = true; }
    } else if (key === "r" && item.classList.contains("inbox-item--question")) {
      var answer = item.querySelector('input[data-key="r"]');
      if (answer) { answer.focus(); handled = true; }
    } else if (key === "r" || key === "l" || key === "d") {
      handled = openDisclosure(item, key);
    }
    if (handled) event.preventDefault();
  });
})();
