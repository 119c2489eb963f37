// The service's reachability: a banner while it does not answer (every control of the page off meanwhile), and the
// pollers of the page, which back off while it is away and try again at once when it answers.

import * as api from "./api.js";
import { h } from "./tables/common.js";

export const POLL_MAX_MS = 16000;   // the longest wait between two tries while the service does not answer
const pokes = new Set();     // every poller's "try now" (the banner's button, and the service answering again)

export function offlineBanner() {
  const main = document.getElementById("main");
  const el = document.getElementById("offline");
  if (!api.network.up) {
    el.replaceChildren(h("b", {}, "The service is not answering."), " Retrying",
      h("span#offline-retry", {}, ""), " — the page carries on by itself when it is back. ",
      h("button#retry-now", { type: "button", onclick: () => pokes.forEach((p) => p()) }, "Retry now"));
    el.hidden = false;
    document.body.classList.add("offline");
    // every control of the page is off while nothing it sends could arrive (the banner's own button stays on)
    for (const c of main.querySelectorAll("button, input, select, textarea")) {
      if (!c.disabled) { c.disabled = true; c.dataset.offline = "1"; }
    }
  } else {
    el.hidden = true;
    el.replaceChildren();
    document.body.classList.remove("offline");
    for (const c of main.querySelectorAll("[data-offline]")) { c.disabled = false; delete c.dataset.offline; }
  }
}
api.network.addEventListener("down", offlineBanner);
api.network.addEventListener("up", () => { offlineBanner(); pokes.forEach((p) => p()); });

/** Run `fn` now and every `ms` after it ends; while the service does not answer, wait twice as long each time (up to
 *  POLL_MAX_MS), and try again at once when it answers another request. `fn` may return "stop"; another error goes
 *  to `onError` (the page's flash). */
export function every(ms, fn, onError = () => {}) {
  let stopped = false;
  let timer = null;
  let failures = 0;
  let running = false;
  const tick = async () => {
    clearTimeout(timer);
    if (stopped || running) return;
    running = true;
    let delay = ms;
    try {
      if ((await fn()) === "stop") { stopped = true; pokes.delete(tick); }
      failures = 0;
    } catch (e) {
      if (e.offline) {
        failures++;
        delay = Math.min(ms * 2 ** failures, POLL_MAX_MS);
        const note = document.getElementById("offline-retry");
        if (note) note.textContent = ` in ${Math.round(delay / 1000)} s`;
      } else if (!stopped) onError(e.message);
    } finally { running = false; }
    if (!stopped) timer = setTimeout(tick, delay);
  };
  pokes.add(tick);
  tick();
  return () => { stopped = true; clearTimeout(timer); pokes.delete(tick); };
}
