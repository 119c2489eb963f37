// The replay viewer (#/replay/<game>): a finished game's table at any event, a slider over its events, and each
// event's audit line beside it. The page's own helpers (flash, notFound) come from app.js.

import * as api from "./api.js";
import { h } from "./tables/common.js";
import { tableFor } from "./tables/index.js";

/** Draw the viewer into `main`; returns the function that stops it (a route change). */
export function replayPage(main, gameId, { flash, notFound }) {
  const box = h("div.replay#replay", { dataset: { game: gameId } });
  main.replaceChildren(box);
  let alive = true;
  (async () => {
    let latest;
    try { latest = await api.view(gameId); }
    catch (e) { if (e.status === 404 && e.code === "not_found") { notFound("game", gameId); return; } throw e; }
    if (latest.status !== "finished") {
      box.replaceChildren(h("p", {}, "Replays open once the game is over. ", h("a", { href: `#/games/${gameId}/watch` }, "Watch it")));
      return;
    }
    const table = tableFor(latest.kind);
    let lines = null;   // the audit, for a replay answer without its event's line
    const slider = h("input#seq", { type: "range", min: 0, max: latest.version, step: 1, value: latest.version });
    const seqLabel = h("output#seq-label", {}, "");
    const line = h("pre#audit-line.audit-line", {}, "");
    const tableEl = h("div.table#replay-table", { dataset: { kind: latest.kind } });
    const ctx = { state: {}, readonly: true, send: () => {} };
    let asked = 0;
    const load = async () => {
      const at = Number(slider.value);
      const mine = ++asked;
      const data = await api.replay(gameId, at);
      if (mine !== asked || !alive) return;   // a later move of the slider has overtaken this answer
      let text = data.event && data.event.line;
      if (text === undefined) {
        if (!lines) {
          lines = new Map((await api.audit(gameId)).split("\n").filter(Boolean).map((l) => [Number(l.split(/\s+/)[0]), l]));
        }
        text = lines.get(at);
      }
      seqLabel.textContent = `event ${at} of ${latest.version}`;
      line.textContent = at === 0 ? "(before the first event)" : text || "";
      table.render(tableEl, data.view, ctx);
      tableEl.dataset.at = at;
    };
    const step = (d) => { slider.value = Math.max(0, Math.min(latest.version, Number(slider.value) + d)); load(); };
    slider.addEventListener("input", () => load().catch((e) => flash(e.message)));
    box.replaceChildren(
      h("div.game-head", {}, h("h2", {}, "Replay: ", table.title, " ", h("span.muted.small", {}, gameId)),
        h("span.nav", {}, h("a", { href: `#/games/${gameId}/watch` }, "final table"))),
      h("div.slider", {},
        h("button#prev", { type: "button", onclick: () => step(-1) }, "◀"), slider,
        h("button#next", { type: "button", onclick: () => step(1) }, "▶"), seqLabel),
      h("div.replay-body", {}, tableEl, h("aside.audit", {}, h("h3", {}, "Audit line"), line)));
    await load();
  })().catch((e) => flash(e.message));
  return () => { alive = false; };
}
