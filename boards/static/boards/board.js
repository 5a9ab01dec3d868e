// Drag and drop on the board. The keyboard (and no-JS) way is each card's "Move to" form;
// dragging posts the same form with the drop column and a position between the neighbours.
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
})();
