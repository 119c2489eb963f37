// The move log beside a table (GET /games/{id}/log, docs/log.md): the server's words, newest first, and a notice
// for each line that tells the caller something happened to them (their meter set to 0, a card taken…).
import * as api from "../api.js";
import { h } from "./common.js";

const NOTICE_MS = 12000;

function notices() {
  let box = document.getElementById("notices");
  if (!box) {
    box = h("div#notices.notices", { role: "status", "aria-live": "polite" });
    document.body.append(box);
  }
  return box;
}

function notify(text) {
  const note = h("div.notice", {}, h("span.notice-text", {}, text),
    h("button.notice-close", { type: "button", title: "dismiss", onclick: () => note.remove() }, "×"));
  notices().prepend(note);
  setTimeout(() => note.remove(), NOTICE_MS);
}

function makeLog(gameId) {
  const list = h("ol.log-lines#log-lines", { reversed: true });
  const el = h("aside.move-log#move-log", { dataset: { game: gameId } }, h("h3", {}, "Moves"), list);
  const log = { gameId, el, after: 0, busy: false, wanted: 0, loaded: false, token: null };
  log.update = async (version, token) => {
    log.wanted = Math.max(log.wanted, version);
    log.token = token;
    if (log.busy || log.after >= log.wanted) return;
    log.busy = true;
    try {
      while (log.after < log.wanted) {
        const page = await api.get(`/games/${gameId}/log?after=${log.after}`, log.token || undefined);
        for (const l of page.lines) {
          const item = h("li.log-line", { dataset: { seq: l.seq }, title: new Date(l.at).toLocaleTimeString() }, l.line);
          if (l.notice) {
            item.classList.add("for-you");
            item.dataset.notice = l.notice;
            if (log.loaded) notify(l.notice);   // only what arrives while the page is open
          }
          list.prepend(item);
        }
        log.after = Math.max(log.after, page.version);
        if (!page.lines.length) break;
      }
      log.loaded = true;
      el.dataset.version = log.after;
    } catch { /* a later version retries */ }
    finally { log.busy = false; }
    if (log.after < log.wanted) setTimeout(() => log.update(log.wanted, log.token), 500);
  };
  return log;
}

/** The log panel of `view`'s game, kept across renders in ctx.state; none in a replay (ctx.readonly). */
export function logPanel(view, ctx) {
  if (ctx.readonly || !view.game_id) return null;
  let log = ctx.state.log;
  if (!log || log.gameId !== view.game_id) log = ctx.state.log = makeLog(view.game_id);
  // the seat's token (for its notices); a spectator reads the same words without one
  log.update(view.version, view.seat == null ? null : api.tokenFor(view.game_id));
  return log.el;
}

/** A table's content with the log beside it. */
export function withLog(view, ctx, ...content) {
  const panel = logPanel(view, ctx);
  return panel ? h("div.with-log", {}, h("div.table-main", {}, ...content), panel) : h("div.table-main", {}, ...content);
}
