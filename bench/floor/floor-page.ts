// Registers the floor's bare service worker for this folder and says when it controls the page.
export {};

const scope = new URL('./', location.href).pathname;
await navigator.serviceWorker.register(`${scope}floor-sw.js`, { scope });
if (!navigator.serviceWorker.controller) {
  await new Promise((resolve) =>
    navigator.serviceWorker.addEventListener('controllerchange', resolve, { once: true }),
  );
}
document.documentElement.dataset.ready = 'true';
