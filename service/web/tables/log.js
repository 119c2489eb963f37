// The move log beside a table (GET /games/{id}/log, docs/log.md): the server's words, newest first, and a notice
// for each line that tells the caller something happened to them (their meter set to 0, a card taken…).
import * as api from "../api.js";
import { every } from "../reach.js";
import { h } from "./common.js";

const NOTICE_MS = 12000;
const MAX_NOTICES = 3;
const RETRY_MS = 500;   // a log behind the table asks again this soon; reach.js doubles it while the service is away

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
  const box = notices();
  box.prepend(note);
  // a stack grows up from the foot of the screen: a few at once, the oldest giving way, leave the log's newest lines
  // (at the top of the panel beside the table) in sight — each notice's line is in the log, marked as the caller's
  while (box.children.length > MAX_NOTICES) box.lastElementChild.remove();
  setTimeout(() => note.remove(), NOTICE_MS);
}

function makeLog(gameId) {
  const list = h("ol.log-lines#log-lines", { reversed: true });
  const el = h("aside.move-log#move-log", { dataset: { game: gameId } }, h("h3", {}, "Moves"), list);
  const log = { gameId, el, after: 0, busy: false, wanted: 0, loaded: false, token: null };
  // one page of lines after `log.after`, as many times as it takes to reach the version asked for
  const pull = async () => {
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
  };
  // Asked for a version it has not read: pull until it has, as one of reach.js's pollers, so that while the service
  // does not answer the tries back off as the page's other pollers do, and come again at once when it answers.
  log.update = (version, token) => {
    log.wanted = Math.max(log.wanted, version);
    log.token = token;
    if (log.busy || log.after >= log.wanted) return;
    log.busy = true;
    every(RETRY_MS, async () => {
      try { await pull(); } catch (e) {
        if (e.offline) throw e;   // reach.js waits longer each time
        log.busy = false;         // another failure: the next version the table shows asks again
        return "stop";
      }
      if (log.after < log.wanted) return undefined;   // the log lags the view by a moment: again in RETRY_MS
      log.busy = false;
      return "stop";
    });
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
