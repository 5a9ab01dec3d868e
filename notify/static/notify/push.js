// Turn push on for this device: the service worker, the permission, the subscription sent to Weft.
(function () {
  const button = document.getElementById("push-enable");
  const status = document.getElementById("push-status");
  if (!button) return;
  const say = (text) => { if (status) status.textContent = text; };
  if (!("serviceWorker" in navigator) || !("PushManager" in window)) {
    button.disabled = true;
    say("This browser cannot receive push notifications. On an iPhone, add Weft to the home screen first.");
    return;
  }
  const key = button.dataset.key;
  const decode = (b64) => {
    const pad = "=".repeat((4 - (b64.length % 4)) % 4);
    const raw = atob((b64 + pad).replace(/-/g, "+").replace(/_/g, "/"));
    return Uint8Array.from(raw, (c) => c.charCodeAt(0));
  };
  const csrf = () => (document.cookie.match(/(?:^|; )csrftoken=([^;]+)/) || [])[1] || "";
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const registration = await navigator.serviceWorker.register("/sw.js", { scope: "/" });
      const permission = await Notification.requestPermission();
      if (permission !== "granted") { say("Notifications are blocked for Weft in this browser's settings."); return; }
      const subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: decode(key) });
      const answer = await fetch("/push/subscriptions/", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
        body: JSON.stringify(subscription.toJSON()),
      });
      say(answer.ok ? "This device gets push notifications now." : "Weft did not accept this device's subscription.");
      if (answer.ok) window.location.reload();
    } catch (error) {
      say("Push could not be turned on: " + error.message);
    } finally {
      button.disabled = false;
    }
  });
})();
