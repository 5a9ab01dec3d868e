// Weft's service worker: shows an Inbox item's push message and opens the Inbox on a tap.
self.addEventListener("push", (event) => {
  let data = {};
  try { data = event.data ? event.data.json() : {}; } catch (e) { data = { title: "Weft", body: event.data ? event.data.text() : "" }; }
  event.waitUntil(self.registration.showNotification(data.title || "Weft", {
    body: data.body || "",
    tag: data.tag || "weft",
    data: { url: data.url || "/" },
    icon: "{{ '/static/notify/icon.svg' }}",
  }));
});
self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = (event.notification.data && event.notification.data.url) || "/";
  event.waitUntil(clients.matchAll({ type: "window", includeUncontrolled: true }).then((open) => {
    for (const client of open) { if (client.url.endsWith(url) && "focus" in client) return client.focus(); }
    return clients.openWindow(url);
  }));
});
