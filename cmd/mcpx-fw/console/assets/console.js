// The review console's only script. It keeps the queue live: on each
// "changed" event from /events it fetches the fresh list (HTML the server
// rendered and escaped) and puts it in place, without a reload.
"use strict";
(function () {
  var queue = document.getElementById("queue");
  if (!queue || !window.EventSource) {
    return;
  }
  var events = new EventSource("/events");
  events.addEventListener("changed", function () {
    fetch(queue.getAttribute("data-live"), { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : Promise.reject(r.status); })
      .then(function (html) { queue.innerHTML = html; })
      .catch(function () {});
  });
})();
