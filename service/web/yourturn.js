// "Your turn" in the header: the registered player's own stream (GET /players/me/stream, docs/player-stream.md)
// says where a move of theirs is awaited, in every game, so the page shows a badge linking to the other tables that
// wait on them. An EventSource cannot send the Authorization header the stream needs: it is read with fetch, and
// resumed after the last id seen (Last-Event-ID) when the connection drops.
import { h } from "./tables/common.js";

const RETRY_MS = 3000;
const playing = (legal) => (legal || []).some((c) => c.type !== "resign");

/** Start following `player`'s stream; the badge goes into `header`. Answers a function that stops it. */
export function yourTurnBadge(player, header, api) {
  const badge = h("span#your-turn.your-turn", { hidden: true, role: "status" });
  header.append(badge);
  const candidates = new Map();   // game_id -> the version of its last `turn` (until a game_over, or a look says no)
  let lastId = null;
  let stopped = false;
  let controller = null;

  const current = () => (location.hash.match(/^#\/games\/([^/]+)$/) || [])[1];

  /** Look at each candidate game: it stays while the player's seat has a playing move there. */
  async function recheck() {
    for (const gameId of [...candidates.keys()]) {
      const view = await api.view(gameId, player.token).catch(() => null);
      if (!view || view.status !== "playing" || !playing(view.legal)) candidates.delete(gameId);
    }
    show();
  }

  function show() {
    const here = current();
    const games = [...candidates.keys()].filter((g) => g !== here);
    badge.hidden = !games.length;
    badge.replaceChildren(...(games.length
      ? ["Your turn: ", ...games.map((g, i) => h("a.your-turn-game", { href: `#/games/${g}`, dataset: { game: g } },
          i ? `, ${g}` : g))]
      : []));
  }

  function handle(event, data) {
    if (event === "turn") candidates.set(data.game_id, data.version);
    else if (event === "game_over") candidates.delete(data.game_id);
  }

  async function follow() {
    while (!stopped) {
      controller = new AbortController();
      const headers = { authorization: `Bearer ${player.token}` };
      if (lastId) headers["last-event-id"] = lastId;
      try {
        const r = await fetch("/players/me/stream", { headers, signal: controller.signal });
        if (r.status === 401) return;   // an old token: nothing to follow
        if (!r.ok || !r.body) throw new Error(`HTTP ${r.status}`);
        await read(r.body.getReader());
      } catch { /* dropped or aborted: resume after the last id */ }
      if (!stopped) await new Promise((ok) => setTimeout(ok, RETRY_MS));
    }
  }

  async function read(reader) {
    const decoder = new TextDecoder();
    let text = "";
    let caughtUp = false;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += decoder.decode(value, { stream: true });
      let end;
      while ((end = text.indexOf("\n\n")) >= 0) {
        const message = {};
        for (const line of text.slice(0, end).split("\n")) {
          if (line.startsWith(":")) continue;
          const at = line.indexOf(":");
          message[line.slice(0, at)] = line.slice(at + 1).replace(/^ /, "");
        }
        text = text.slice(end + 2);
        if (message.id) lastId = message.id;
        if (message.event && message.data) handle(message.event, JSON.parse(message.data));
        caughtUp = true;
      }
      if (caughtUp) await recheck();   // once per chunk: a backlog read at once is looked at once
      caughtUp = false;
    }
  }

  const onHash = () => { show(); recheck(); };   // a game left may have been answered there
  window.addEventListener("hashchange", onHash);
  follow();
  return () => {
    stopped = true;
    if (controller) controller.abort();
    window.removeEventListener("hashchange", onHash);
    badge.remove();
  };
}

// The open table's own turn: what the page's title and focus follow (the badge above is the other tables').

export const ACTIONS = ["button.cmd[data-type=roll]:not([disabled])", ".mono-side-col button:not([disabled])", "section.prompt button:not([disabled])",
                 "section.legal button:not([disabled])", ".controls button:not([disabled])", "button.cmd:not([disabled])"].join(", ");

/** Whether the caller is the one the game waits for: their turn, or an answer of theirs pending (a solitaire is
 *  always its player's: not announced). */
export function yourTurn(view) {
  if (view.status !== "playing" || view.seat == null || view.kind === "solitaire") return false;
  const p = view.pending;
  if (p && (p.seats || p.seat != null)) return (p.seats || [p.seat]).includes(view.seat);   // an answer awaited
  const turn = view.turn_seat != null ? view.turn_seat : view.turn;
  return turn === view.seat && (view.legal || []).length > 0;
}
