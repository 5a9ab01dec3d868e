// The board's keys and its command palette.
//   j / k    the next / previous card (or list row); Enter opens it
//   /        the search box;  c  the new-task form, focused on Title
//   Ctrl-K or Cmd-K   the palette: the page's commands and the tasks on the page, filtered as you type
// Keys are ignored while typing in a field. The list view's "select all" box and ticked count live
// here too, and the new-task form focusing Title when it opens. Everything is also reachable
// without script: links, forms and the Apply button.
(function () {
  "use strict";

  var focusedId = null;

  function typing(target) {
    if (!target || !target.closest) return false;
    return !!target.closest("input, textarea, select, [contenteditable=true], dialog[open]");
  }

  function items() {
    return Array.prototype.slice.call(document.querySelectorAll("#board-view .task-card, #board-view .task-row"));
  }

  function step(delta) {
    var all = items();
    if (!all.length) return;
    var at = all.findIndex(function (el) { return el.dataset.taskId === focusedId; });
    var next = all[Math.max(0, Math.min(all.length - 1, at < 0 ? 0 : at + delta))];
    all.forEach(function (el) { el.classList.remove("is-key-focus"); });
    next.classList.add("is-key-focus");
    focusedId = next.dataset.taskId;
    var link = next.querySelector("a[href]");
    if (link) link.focus({ preventScroll: true });
    next.scrollIntoView({ block: "nearest" });
  }

  function openFocused() {
    var el = focusedId && document.querySelector('#board-view [data-task-id="' + focusedId + '"] a[href]');
    if (el) window.location.assign(el.getAttribute("href"));
  }

  function newTask() {
    var form = document.querySelector("details.new-task");
    if (!form) return;
    form.open = true;
    var title = document.getElementById("new-title");
    if (title) title.focus();
  }

  // The palette.
  var dialog = document.getElementById("palette");
  var input = document.getElementById("palette-input");
  var list = document.getElementById("palette-list");
  var selected = 0;

  function choices() {
    var out = [];
    var actions = document.getElementById("palette-actions");
    if (actions) {
      actions.content.querySelectorAll("li").forEach(function (li) {
        out.push({ label: li.textContent.trim(), href: li.dataset.href, action: li.dataset.action });
      });
    }
    items().forEach(function (el) {
      var link = el.querySelector("a[href]");
      if (link) out.push({ label: "Open " + link.textContent.trim().replace(/\s+/g, " "), href: link.getAttribute("href") });
    });
    return out;
  }

  function render() {
    var words = input.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = choices().filter(function (c) {
      var label = c.label.toLowerCase();
      return words.every(function (w) { return label.indexOf(w) >= 0; });
    }).slice(0, 50);
    selected = Math.min(selected, Math.max(0, shown.length - 1));
    list.replaceChildren();
    shown.forEach(function (c, i) {
      var li = document.createElement("li");
      li.id = "palette-option-" + i;
      li.setAttribute("role", "option");
      li.setAttribute("aria-selected", i === selected ? "true" : "false");
      li.textContent = c.label;
      li.addEventListener("click", function () { run(c); });
      li._choice = c;
      list.appendChild(li);
    });
    if (!shown.length) {
      var none = document.createElement("li");
      none.className = "palette__empty";
      none.textContent = "Nothing matches.";
      list.appendChild(none);
    }
    input.setAttribute("aria-activedescendant", shown.length ? "palette-option-" + selected : "");
  }

  function run(choice) {
    dialog.close();
    if (choice.action === "new-task") newTask();
    else if (choice.href) window.location.assign(choice.href);
  }

  function openPalette() {
    if (!dialog || dialog.open) return;
    input.value = "";
    selected = 0;
    render();
    dialog.showModal();
    input.focus();
  }

  if (dialog) {
    input.addEventListener("input", function () { selected = 0; render(); });
    input.addEventListener("keydown", function (event) {
      var options = list.querySelectorAll("[role=option]");
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        if (!options.length) return;
        selected = (selected + (event.key === "ArrowDown" ? 1 : options.length - 1)) % options.length;
        render();
      } else if (event.key === "Enter") {
        event.preventDefault();
        if (options[selected]) run(options[selected]._choice);
      }
    });
  }

  document.addEventListener("keydown", function (event) {
    if ((event.ctrlKey || event.metaKey) && !event.altKey && event.key.toLowerCase() === "k") {
      event.preventDefault();
      openPalette();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
    if (event.key === "j") step(1);
    else if (event.key === "k") step(-1);
    else if (event.key === "Enter" && focusedId && event.target === document.body) openFocused();
    else if (event.key === "/") {
      var search = document.getElementById("id_q");
      if (search) { event.preventDefault(); search.focus(); search.select(); }
      return;
    } else if (event.key === "c") { event.preventDefault(); newTask(); return; }
    else return;
    if (event.key !== "Enter") event.preventDefault();
  });

  // Opening the new-task form puts the cursor in Title, however it was opened.
  var creator = document.querySelector("details.new-task");
  if (creator) {
    creator.addEventListener("toggle", function () {
      var title = document.getElementById("new-title");
      if (creator.open && title) title.focus();
    });
  }

  // The list view: "select all" and the count of ticked tasks.
  function countTicked() {
    var counter = document.querySelector("[data-bulk-count]");
    if (!counter) return;
    var n = document.querySelectorAll('#bulk-form input[name="task"]:checked').length;
    counter.textContent = n ? n + (n === 1 ? " task" : " tasks") + " ticked." : "Tick tasks to act on them.";
  }

  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target.matches && target.matches("[data-select-all]")) {
      document.querySelectorAll('#bulk-form input[name="task"]').forEach(function (box) { box.checked = target.checked; });
    }
    if (target.closest && target.closest("#bulk-form")) countTicked();
    if (target.matches && target.matches("select[data-autosubmit]")) target.form.submit();
  });
})();
