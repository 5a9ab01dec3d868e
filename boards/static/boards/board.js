// Drag and drop on the board, and the cards' menus. Without script a card's menu links to its task page,
// which has the Move and Trash forms; dragging posts the Move form with the drop column and a position.
(function () {
  "use strict";

  var notices = document.getElementById("board-notices");
  var dragged = null;

  function csrfToken() {
    var input = document.querySelector("input[name=csrfmiddlewaretoken]");
    return input ? input.value : "";
  }

  function notify(text, kind) {
    if (!notices) return;
    var li = document.createElement("li");
    li.className = "message message--" + (kind || "error");
    li.textContent = text;
    notices.replaceChildren(li);
  }

  function cardAfter(list, y) {
    var cards = Array.prototype.slice.call(list.querySelectorAll(".task-card:not(.is-dragging)"));
    for (var i = 0; i < cards.length; i++) {
      var box = cards[i].getBoundingClientRect();
      if (y < box.top + box.height / 2) return cards[i];
    }
    return null;
  }

  function positionBetween(before, after) {
    var b = before ? parseFloat(before.dataset.position) : null;
    var a = after ? parseFloat(after.dataset.position) : null;
    if (b === null && a === null) return 0;
    if (b === null) return a - 1;
    if (a === null) return b + 1;
    return (a + b) / 2;
  }

  document.addEventListener("dragstart", function (event) {
    var card = event.target.closest && event.target.closest(".task-card[draggable=true]");
    if (!card) return;
    dragged = card;
    card.classList.add("is-dragging");
    event.dataTransfer.effectAllowed = "move";
    event.dataTransfer.setData("text/plain", card.dataset.taskId);
  });

  document.addEventListener("dragend", function () {
    if (dragged) dragged.classList.remove("is-dragging");
    document.querySelectorAll(".column__cards.is-over").forEach(function (l) { l.classList.remove("is-over"); });
    dragged = null;
  });

  document.addEventListener("dragover", function (event) {
    var list = event.target.closest && event.target.closest("[data-drop]");
    if (!list || !dragged) return;
    if (list.dataset.drop === "doing") return;  // not a drop target: agents start tasks
    event.preventDefault();
    list.classList.add("is-over");
  });

  document.addEventListener("dragleave", function (event) {
    var list = event.target.closest && event.target.closest("[data-drop]");
    if (list && !list.contains(event.relatedTarget)) list.classList.remove("is-over");
  });

  document.addEventListener("drop", function (event) {
    var list = event.target.closest && event.target.closest("[data-drop]");
    if (!list || !dragged) return;
    event.preventDefault();
    list.classList.remove("is-over");
    var card = dragged;
    var after = cardAfter(list, event.clientY);
    var before = after ? after.previousElementSibling : list.querySelector(".task-card:last-of-type");
    if (before === card) before = before.previousElementSibling;
    if (before && !before.classList.contains("task-card")) before = null;
    var body = new URLSearchParams();
    body.set("column", list.dataset.drop);
    body.set("position", String(positionBetween(before, after)));
    list.insertBefore(card, after);
    fetch(card.dataset.moveUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken(), "HX-Request": "true" },
      body: body
    }).then(function (response) {
      if (!response.ok) return response.text().then(function (text) { notify(text || "The task was not moved."); });
      notify("Moved #" + card.dataset.taskId + ".", "success");
    }).catch(function () {
      notify("The task was not moved: the server did not answer.");
    }).finally(function () {
      if (window.weftLive) window.weftLive.refresh();
    });
  });
  // A card's menu is filled when it opens, from the page's one template: Start (or Done and Stop
  // for the viewer's own run), Move to… (the card's column selected, or shown disabled when a
  // person cannot move it there) and Trash.
  function fillMenu(panel, card) {
    var template = document.getElementById("card-menu-template");
    if (!template || panel.dataset.filled) return;
    var id = card.dataset.taskId;
    var parts = template.content.cloneNode(true);
    var move = parts.querySelector(".move-form");
    var select = move.querySelector("select");
    move.action = card.dataset.moveUrl;
    select.id = "move-" + id;
    move.querySelector("[data-for-select]").htmlFor = select.id;
    var current = panel.dataset.menuColumn;
    var known = Array.prototype.some.call(select.options, function (o) { return o.value === current; });
    if (known) select.value = current;
    else {
      var stays = new Option(panel.dataset.menuLabel, "", true, true);
      stays.disabled = true;
      select.insertBefore(stays, select.firstChild);
    }
    personal(parts, ".start-form", panel.dataset.startUrl, "Start #" + id + " yourself");
    personal(parts, ".done-form", panel.dataset.stopUrl && card.dataset.moveUrl, "Done: finish #" + id);
    personal(parts, ".stop-form", panel.dataset.stopUrl, "Stop #" + id + ", back to Todo");
    var trash = parts.querySelector(".trash-form");
    trash.action = panel.dataset.trashUrl;
    trash.querySelector("button").setAttribute("aria-label", "Trash #" + id);
    panel.replaceChildren(parts);
    panel.dataset.filled = "1";
  }

  // A person's own actions: kept with their target when the card offers them, else removed.
  function personal(parts, selector, action, label) {
    var form = parts.querySelector(selector);
    if (!action) { form.remove(); return; }
    form.action = action;
    form.querySelector("button").setAttribute("aria-label", label);
  }

  document.addEventListener("toggle", function (event) {
    var menu = event.target;
    if (!menu.classList || !menu.classList.contains("card-menu") || !menu.open) return;
    var panel = menu.querySelector("[data-card-menu]");
    var card = menu.closest(".task-card");
    if (panel && card) fillMenu(panel, card);
    var first = panel && panel.querySelector("select, a, button");
    if (first) first.focus();
  }, true);
})();
