// "Play now" (docs/queue.md): queue for a new table of one kind, wait (the wait can be cancelled), then go straight to
// the table. The client seed and this browser's key go with the queueing, as a join sends them (api.join): the
// seat the queue gives is keyed, and the seed is kept with the game's evidence once the game is known.
import * as api from "./api.js";
import { ownKey } from "./signing.js";
import { rememberClientSeed } from "./storage.js";
import { h } from "./tables/common.js";
import { every } from "./reach.js";

const QUEUE_KEY = "fp.queue";   // {kind, client_seed, public_key}: what this browser queued with, until seated
const KINDS = [["free-parking", "Card game"], ["monopoly", "Monopoly"]];

const pending = () => { try { return JSON.parse(localStorage.getItem(QUEUE_KEY)) || null; } catch { return null; } };
const remember = (q) => (q ? localStorage.setItem(QUEUE_KEY, JSON.stringify(q)) : localStorage.removeItem(QUEUE_KEY));

function randomSeed() {
  return [...crypto.getRandomValues(new Uint8Array(32))].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** The lobby's "Play now" box: `{box, stop}`; `stop` ends its polling when the page changes. */
export function playNow(flash) {
  const p = api.player();
  const box = h("section.box#play-now", {}, h("h2", {}, "Play now"));
  if (!p) {
    box.append(h("p.muted", {}, "Register (or sign in) to be seated with players of your rating, or with bots after a short wait."));
    return { box, stop: () => {} };
  }
  const buttons = h("p#play-now-kinds", {}, KINDS.map(([kind, title]) =>
    h("button.play-now", { type: "button", dataset: { kind }, onclick: () => start(kind) }, `Play now: ${title}`)));
  const status = h("p#queue-status", { role: "status" });
  const cancel = h("button#queue-cancel", { type: "button", onclick: () => leave() }, "Cancel");
  const waiting = h("div#queue-wait", { hidden: true }, status, cancel);
  box.append(h("p.muted.small", {}, "A new table with players close to your rating; bots fill it if nobody comes."),
             buttons, waiting);
  let stopPoll = () => {};

  const show = (on) => { waiting.hidden = !on; buttons.hidden = on; };
  async function start(kind) {
    const key = await ownKey();
    const q = { kind, client_seed: randomSeed(), public_key: key ? key.public_key : null };
    const body = { kind, client_seed: q.client_seed };
    if (q.public_key) body.public_key = q.public_key;
    try {
      await api.post("/queue", body, p.token);
    } catch (err) {
      if (err.code !== "already_queued") { flash(err.message); return; }
    }
    remember(q);
    poll();
  }
  async function leave() {
    stopPoll();
    try { await api.call("DELETE", "/queue", { token: p.token }); } catch (err) { flash(err.message); }
    remember(null);
    show(false);
    poll();   // a table may have been made just before: then go to it
  }
  function poll() {
    stopPoll();
    stopPoll = every(500, async () => {
      const st = await api.get("/queue", p.token);
      if (st.state === "seated") {
        const q = pending();
        api.rememberSeat(st.game_id, st.token || p.token);
        if (q) rememberClientSeed(st.game_id, st.seat, q.client_seed, q.public_key);
        remember(null);
        location.hash = `#/games/${st.game_id}`;
        return "stop";
      }
      if (st.state === "waiting" || st.state === "seating") {
        show(true);
        const kind = (KINDS.find(([k]) => k === st.kind) || [])[1] || st.kind || "";
        status.textContent = st.state === "seating" ? "A table was found: taking your seat…"
          : `Looking for players for ${kind}${st.gap != null ? ` (within ${Math.round(st.gap)} rating points)` : ""}…`;
        return undefined;
      }
      if (st.state === "cancelled") flash(st.reason || "The table could not be made: try again");
      show(false);
      return "stop";
    }, flash);
  }
  if (pending()) poll();
  return { box, stop: () => stopPoll() };
}
