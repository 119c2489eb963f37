// Free Parking solitaire: the 4 × 13 grid. Click a card that can move, then one of the gaps it may go to
// (both from `legal`); the hint button lights up the view's hint; undo, redeal and resign when legal. A stuck game
// (`view.stuck`, rules version 2) is still playing: its `legal` is undo and resign, offered in a box of their own.
// Around the grid, as an online solitaire has them: the goal in short, a clock from the first move (the scores read
// model's `first_move_at`, stopped at its `time_ms`), the player's statistics (GET /players/{id}/stats), a new deal,
// "play this deal again" (a game on the finished one's seed: docs/solitaire-api.md), and a win screen with the time.
// Beside it, the move log (tables/log.js): each move in the page's words ("2♣ from row 4, slot 6…").
import { h, humanize, clockText, focusKeys, restoreFocus, count } from "./common.js";
import { withLog } from "./log.js";

const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const SUIT_NAMES = { C: "clubs", D: "diamonds", H: "hearts", S: "spades" };
const RANKS = { T: "10" };
const RANK_NAMES = { J: "jack", Q: "queen", K: "king", T: "10" };

export function cardText(id) {
  return (RANKS[id[0]] || id[0]) + SUITS[id[1]];
}
const cardName = (id) => `${RANK_NAMES[id[0]] || id[0]} of ${SUIT_NAMES[id[1]]}`;

function label(c) {
  if (c.type === "move") return `Move ${cardText(c.card)} to row ${c.to.row + 1}, slot ${c.to.slot}`;
  return humanize(c.type);
}

const pct = (x) => (x == null ? "—" : `${Math.round(x * 100)}%`);
const time = (ms) => (ms == null ? "—" : clockText(ms));

/** A player's record in one statistics bucket: played, won, win rate, best and median time. */
export function statsList(b, title = "Your statistics") {
  return h("section.sol-stats#sol-stats", { "aria-label": title },
    h("h3", {}, title),
    h("dl.stats", {},
      h("div", {}, h("dt", {}, "Played"), h("dd#stat-played", {}, b.started)),
      h("div", {}, h("dt", {}, "Won"), h("dd#stat-won", {}, b.won)),
      h("div", {}, h("dt", {}, "Win rate"), h("dd#stat-rate", {}, pct(b.win_rate))),
      h("div", {}, h("dt", {}, "Best time"), h("dd#stat-best", {}, time(b.best_ms))),
      h("div", {}, h("dt", {}, "Median time"), h("dd#stat-median", {}, time(b.median_ms)))),
    h("p.muted.small", {}, "Dealt games only: a deal you chose, or one whose redeal you undid, is counted apart. ",
      "A game counts as played from its deal, so a deal left unplayed is not won."));
}

const RULES = h("details.rules#sol-rules", { open: true },
  h("summary", {}, "How to play"),
  h("ul", {},
    h("li", {}, h("b", {}, "Goal: "), "each row reads 2 to king of one suit, from slot 1 (slot 13 stays empty)."),
    h("li", {}, "A gap takes the card one rank above its left neighbour, same suit (a king's gap takes nothing), ",
      "or one rank below its right neighbour. A gap in slot 1 takes any 2."),
    h("li", {}, "Click a card (outlined), then a lit gap. Two redeals shuffle every card not yet in a row's run."),
    h("li", {}, "No move and no redeal left: the game is stuck, not lost — undo, or resign. Undo is unlimited.")));

/** The clock, fetched from the scores read model: {first, timeMs, version}; kept in the table's state. */
async function fetchTiming(ctx, view) {
  const st = ctx.state;
  if (!ctx.api || st.timingFor === view.version) return;
  st.timingFor = view.version;
  for (let tries = 0; tries < 20 && st.version === view.version; tries++) {
    try {
      const { scores } = await ctx.api.scores(view.game_id);
      const s = scores && scores.solitaire;
      if (s && s.first_move_at) st.first = s.first_move_at;
      if (s && scores.status === "finished") st.timeMs = s.time_ms;
      // the read model may lag the game by a projector pass: ask again until it has caught up with this version
      if (s && scores.version >= view.version) return;
    } catch (e) { if (e.offline) break; /* the banner says so; the next position asks again */ }
    await new Promise((r) => setTimeout(r, 250 * (tries + 1)));
  }
  if (st.version === view.version) st.timingFor = null;
}

function paintTimer(root, view, st) {
  const el = root.querySelector("#sol-timer");
  if (!el) return;
  if (view.status === "finished") {
    delete el.dataset.clockFrom;
    el.dataset.stopped = "1";
    el.textContent = st.timeMs !== undefined ? time(st.timeMs) : "…";
  } else if (st.first) {
    el.dataset.clockFrom = st.first;
    el.textContent = clockText(Date.now() - st.first);
  } else {
    el.textContent = "0:00";
    el.title = "the clock starts at your first move";
  }
}

function loadStats(root, ctx, view) {
  const st = ctx.state;
  const p = ctx.player;
  if (!ctx.api || !p || view.player_id !== p.player_id || ctx.readonly) return;
  const key = `${view.status}`;
  if (st.statsFor === key && st.stats) { paintStats(root, st.stats); return; }
  st.statsFor = key;
  ctx.api.stats(p.player_id).then((answer) => { st.stats = answer.solitaire; paintStats(root, st.stats); })
    .catch(() => { st.statsFor = null; });
}

function paintStats(root, stats) {
  const box = root.querySelector("#sol-stats-box");
  if (box && stats) box.replaceChildren(statsList(stats.dealt));
}

/** Why the hint has nothing to offer here. */
function noHintReason(view, legal) {
  if (view.status !== "playing") return "The game is over.";
  if (view.stuck) return "No hint: no card fits any gap, and no redeal is left. Undo a move, or resign.";
  const moves = legal.filter((c) => c.type === "move");
  if (moves.length) return "No hint: every move left only shuttles a card back and forth. Redeal, undo, or try one anyway.";
  if (legal.some((c) => c.type === "redeal")) return "No hint: no card fits any gap. Redeal to deal the loose cards again.";
  return "No hint at this position.";
}

function render(root, view, ctx) {
  const st = ctx.state;
  const legal = ctx.readonly ? [] : view.legal || [];
  const moves = legal.filter((c) => c.type === "move");
  const mine = !ctx.readonly && view.seat != null;
  if (st.version !== view.version) {   // a new position: drop a selection, hint or question that belonged to the old one
    st.version = view.version;
    st.selected = null;
    st.hint = false;
    st.confirm = null;
  }
  const movable = new Set(moves.map((m) => m.card));
  const targets = new Map(moves.filter((m) => m.card === st.selected).map((m) => [`${m.to.row}:${m.to.slot}`, m]));
  const hint = st.hint && view.hint && view.hint.type === "move" ? view.hint : null;
  const redraw = () => {
    const active = document.activeElement;
    const keys = root.contains(active) ? focusKeys(active) : [];
    render(root, view, ctx);
    restoreFocus(root, keys);
  };
  const send = (c) => {
    if (!st.first && view.status === "playing" && c.type !== "resign") st.first = Date.now();   // until the scores say
    return ctx.send(c);
  };

  const grid = h("div.grid", { role: "grid", "aria-label": "the layout: 4 rows of 13 slots" }, (view.layout || []).map((row, r) =>
    h("div.row", { role: "row", dataset: { row: r } },
      h("span.row-label", { role: "rowheader", title: `row ${r + 1}: ${view.runs ? view.runs[r] : 0} cards in its run, from slot 1` },
        h("span.row-name", {}, `Row ${r + 1}`),
        view.runs ? h("span.row-run", {}, `run ${view.runs[r]}`) : null),
      row.map((card, i) => {
        const slot = i + 1;
        const key = `${r}:${slot}`;
        const seated = view.runs && i < view.runs[r];
        const classes = ["cell", card ? "card" : "gap"];
        if (card && "DH".includes(card[1])) classes.push("red");
        if (seated) classes.push("seated");
        if (card && movable.has(card)) classes.push("movable");
        if (card && card === st.selected) classes.push("selected");
        if (!card && targets.has(key)) classes.push("target");
        if (hint && (card === hint.card || (!card && hint.to.row === r && hint.to.slot === slot))) classes.push("hint");
        const onclick = () => {
          if (card && movable.has(card)) { st.selected = st.selected === card ? null : card; redraw(); }
          else if (!card && targets.has(key)) send(targets.get(key));
          else if (st.selected) { st.selected = null; redraw(); }
        };
        const name = card ? `${cardName(card)}, row ${r + 1} slot ${slot}` : `gap, row ${r + 1} slot ${slot}`;
        return h("button", { type: "button", class: classes.join(" "), role: "gridcell",
                             dataset: { row: r, slot, card: card || "" }, title: card ? cardText(card) : `gap: row ${r + 1}, slot ${slot}`,
                             "aria-label": name, onclick, disabled: ctx.readonly || undefined },
          card ? cardText(card) : "");
      }))));

  const has = (type) => legal.find((c) => c.type === type);
  const button = (type, text, extra = {}) => {
    const c = has(type);
    return h("button.cmd", { type: "button", dataset: { type }, disabled: !c || undefined,
                             onclick: () => c && send(c), ...extra }, text);
  };
  const ask = (what) => () => { st.confirm = what; redraw(); root.querySelector("#confirm-yes")?.focus(); };
  const runs = view.runs ? view.runs.reduce((a, b) => a + b, 0) : 0;
  const status = view.status === "finished"
    ? h("span.badge.done", {}, view.result === "won" ? "Won!" : `Lost (${humanize(view.reason || "no moves")})`)
    : view.status === "waiting" ? h("span.badge", {}, "Waiting for the player")
    : view.stuck ? h("span.badge.stuck", {}, "Stuck")
    : h("span.badge.turn", {}, `${view.name || "Player"}${view.account === "bot" ? " (bot)" : ""} playing`);

  // two of them once the game is over (the controls' and the end box's): ids apart, as ids must be
  const newDeal = (id = "new-deal") => h(`button#${id}`, { type: "button", onclick: view.status === "playing" && mine ? ask("new") : () => startNew(ctx) }, "New deal");
  const again = view.status === "finished" && mine
    ? h("button#deal-again", { type: "button", onclick: () => playAgain(ctx, view) }, "Play this deal again") : null;

  const confirmBox = st.confirm ? h("section.confirm#confirm", { role: "alertdialog", "aria-label": "confirm" },
    h("p", {}, st.confirm === "resign"
      ? "Resign this game? It ends now and counts as lost."
      : "Leave this game for a new deal? It stays unfinished and counts as played, not won."),
    h("button#confirm-yes", { type: "button", onclick: confirmed(st.confirm) }, st.confirm === "resign" ? "Yes, resign" : "Yes, new deal"),
    " ", h("button#confirm-no", { type: "button", onclick: () => { st.confirm = null; redraw(); } }, "Keep playing")) : null;
  function confirmed(what) {
    return () => {
      st.confirm = null;
      if (what === "new") return startNew(ctx);
      const c = has("resign");
      return c ? send(c) : redraw();
    };
  }

  const stuckBox = mine && view.status === "playing" && view.stuck && !st.confirm
    ? h("section.stuck#stuck", { role: "status" },
        h("h3", {}, "No move left"),
        h("p", {}, "No card fits any gap and no redeal is left. The game is not lost: undo to go back and try another way, or resign."),
        h("p.buttons", {}, button("undo", "Undo the last move", { id: "stuck-undo" }), " ",
          h("button.cmd#stuck-resign", { type: "button", dataset: { type: "resign" }, disabled: !has("resign") || undefined, onclick: ask("resign") }, "Resign")))
    : null;

  const endBox = view.status === "finished"
    ? h(`section.sol-end#sol-end.${view.result === "won" ? "won" : "lost"}`, { role: "status" },
        h("h3", {}, view.result === "won" ? "You won! Every row runs 2 to king." : view.reason === "resigned" ? "Resigned" : `Game over (${humanize(view.reason || "lost")})`),
        h("p", {}, "Time ", h("b.sol-time", {}, h("span#sol-end-time", {}, "…")), ` · ${runs} of 48 cards in their runs`),
        mine ? h("p.buttons", {}, newDeal("sol-end-new-deal"), " ", again) : null)
    : null;

  const hintText = st.hint
    ? (hint ? h("span.hint-text#hint-text", {}, label(hint))
       : view.hint ? h("span.hint-text#hint-text", {}, humanize(view.hint.type))
       : h("span.hint-text.none#hint-text", {}, noHintReason(view, legal)))
    : null;
  const controls = ctx.readonly ? null : view.seat == null
    ? h("p.muted", {}, "Spectating: no seat of yours at this table.")
    : h("div.controls",
        {},
        h("button.cmd", { type: "button", dataset: { type: "hint" }, disabled: view.status !== "playing" || undefined,
                          onclick: () => { st.hint = !st.hint; if (st.hint && view.hint && view.hint.type === "move") st.selected = view.hint.card; redraw(); } },
          st.hint ? "Hide hint" : "Hint"),
        button("undo", "Undo"),
        button("redeal", `Redeal (${view.redeals_left} left)`),
        h("button.cmd", { type: "button", dataset: { type: "resign" }, disabled: !has("resign") || undefined, onclick: ask("resign") }, "Resign"),
        newDeal(),
        hintText);

  root.dataset.version = view.version;
  root.dataset.stuck = view.stuck ? "1" : "";
  root.replaceChildren(withLog(view, ctx, ...[
    h("div.fp-head", {}, status,
      h("span.sol-clock", { title: "time from your first move" }, "Time ", h("span#sol-timer", {}, "0:00")),
      h("span.muted", {}, ` ${runs} of 48 cards in runs · ${count(view.redeals_left, "redeal")} left`, view.seed_chosen ? " · chosen deal (counted apart)" : "")),
    endBox, stuckBox, confirmBox,
    controls,
    h("div.grid-scroll#grid-scroll", { onscroll: (e) => paintCue(root, e.currentTarget) }, grid),
    h("p.scroll-cue#grid-cue", { hidden: true, "aria-hidden": "true" }),
    mine && moves.length && view.status === "playing"
      ? h("p.muted", {}, st.selected ? `Now click a highlighted gap for ${cardText(st.selected)}.` : "Click a card that can move (outlined), then a gap.")
      : null,
    h("div.sol-side", {}, mine ? h("div#sol-stats-box") : null, RULES)].filter(Boolean)));
  paintTimer(root, view, st);
  requestAnimationFrame(() => {   // once laid out: whether the grid is wider than its box, and the hint in sight
    const scroller = root.querySelector("#grid-scroll");
    if (!scroller) return;
    if (hint && st.hintShown !== view.version) { st.hintShown = view.version; showHint(scroller); }
    paintCue(root, scroller);
  });
  const endTime = root.querySelector("#sol-end-time");
  if (endTime) endTime.textContent = st.timeMs !== undefined ? time(st.timeMs) : "…";
  loadStats(root, ctx, view);
  if (st.timingFor !== view.version && !ctx.readonly) {
    fetchTiming(ctx, view).then(() => {
      if (st.version !== view.version) return;
      paintTimer(root, view, st);
      const t = root.querySelector("#sol-end-time");
      if (t) t.textContent = st.timeMs !== undefined ? time(st.timeMs) : "…";
    });
  }
}

/** A grid wider than the screen (a phone shows about half its 13 slots) says that it scrolls, and which slots are out
 *  of sight; the box's edges are shaded on the side there is more. */
function paintCue(root, scroller) {
  const cue = root.querySelector("#grid-cue");
  if (!cue) return;
  const more = scroller.scrollWidth - scroller.clientWidth > 1;
  const cells = [...scroller.querySelectorAll(".row:first-child .cell")];
  const box = scroller.getBoundingClientRect();
  const seen = cells.filter((c) => { const r = c.getBoundingClientRect(); return r.left >= box.left - 1 && r.right <= box.right + 1; })
    .map((c) => Number(c.dataset.slot));
  const first = seen.length ? Math.min(...seen) : 1, last = seen.length ? Math.max(...seen) : 13;
  const left = more && first > 1, right = more && last < 13;
  scroller.classList.toggle("more-left", left);
  scroller.classList.toggle("more-right", right);
  cue.hidden = !left && !right;
  if (cue.hidden) return;
  cue.textContent = `slots ${first}–${last} of 13 in sight: swipe the grid ${right && left ? "either way" : right ? "left for the rest →" : "right for the rest ←"}`;
}

/** Bring the hint's card and gap into sight, the gap first (the card is picked already: the gap is the next click). */
function showHint(scroller) {
  const gap = scroller.querySelector(".cell.gap.hint");
  const card = scroller.querySelector(".cell.card.hint");
  const box = scroller.getBoundingClientRect();
  const rects = [gap, card].filter(Boolean).map((c) => c.getBoundingClientRect());
  if (!rects.length) return;
  const lo = Math.min(...rects.map((r) => r.left)), hi = Math.max(...rects.map((r) => r.right));
  const pad = 8;
  if (hi - lo + 2 * pad <= box.width) scroller.scrollLeft += (lo + hi) / 2 - (box.left + box.right) / 2;
  else scroller.scrollLeft += rects[0].left - box.left - pad;
  (gap || card).scrollIntoView({ block: "nearest", inline: "nearest" });
}

function startNew(ctx) {
  if (ctx.startGame) ctx.startGame({ kind: "solitaire" }).catch((e) => ctx.flash && ctx.flash(e.message));
}

async function playAgain(ctx, view) {
  try {
    const seed = await ctx.dealSeed(view.game_id);
    if (!seed) throw new Error("This game's deal cannot be found again (its seed is not in its export)");
    await ctx.startGame({ kind: "solitaire", seed });
  } catch (e) { if (ctx.flash) ctx.flash(e.message); }
}

export default {
  kind: "solitaire",
  title: "Solitaire",
  bots: ["greedy", "solver"],
  seats: { min: 1, max: 1, default: 1 },
  options: () => ({}),
  render,
  label,
};
