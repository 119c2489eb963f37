// Free Parking solitaire: the 4 × 13 grid. Click a card that can move, then one of the gaps it may go to
// (both from `legal`); the hint button lights up the view's hint; undo, redeal and resign when legal. A stuck game
// (`view.stuck`, rules version 2) is still playing: its `legal` is undo and resign, the only buttons left lit.
import { h, humanize } from "./common.js";

const SUITS = { C: "♣", D: "♦", H: "♥", S: "♠" };
const RANKS = { T: "10" };

export function cardText(id) {
  return (RANKS[id[0]] || id[0]) + SUITS[id[1]];
}

function label(c) {
  if (c.type === "move") return `Move ${cardText(c.card)} to row ${c.to.row + 1}, slot ${c.to.slot}`;
  return humanize(c.type);
}

function render(root, view, ctx) {
  const st = ctx.state;
  const legal = ctx.readonly ? [] : view.legal || [];
  const moves = legal.filter((c) => c.type === "move");
  if (st.version !== view.version) {   // a new position: drop a selection or hint that belonged to the old one
    st.version = view.version;
    st.selected = null;
    st.hint = false;
  }
  const movable = new Set(moves.map((m) => m.card));
  const targets = new Map(moves.filter((m) => m.card === st.selected).map((m) => [`${m.to.row}:${m.to.slot}`, m]));
  const hint = st.hint && view.hint && view.hint.type === "move" ? view.hint : null;
  const redraw = () => render(root, view, ctx);

  const grid = h("div.grid", { role: "grid" }, (view.layout || []).map((row, r) =>
    h("div.row", { role: "row", dataset: { row: r } },
      h("span.run", { title: "cards seated in this row's run" }, view.runs ? view.runs[r] : ""),
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
          else if (!card && targets.has(key)) ctx.send(targets.get(key));
          else if (st.selected) { st.selected = null; redraw(); }
        };
        return h("button", { type: "button", class: classes.join(" "), role: "gridcell",
                             dataset: { row: r, slot, card: card || "" }, title: card ? cardText(card) : `gap: row ${r + 1}, slot ${slot}`,
                             onclick, disabled: ctx.readonly || undefined },
          card ? cardText(card) : "");
      }))));

  const has = (type) => legal.find((c) => c.type === type);
  const button = (type, text, extra = {}) => {
    const c = has(type);
    return h("button.cmd", { type: "button", dataset: { type }, disabled: !c || undefined,
                             onclick: () => c && ctx.send(c), ...extra }, text);
  };
  const status = view.status === "finished"
    ? h("span.badge.done", {}, view.result === "won" ? "Won!" : `Lost (${humanize(view.reason || "no moves")})`)
    : view.status === "waiting" ? h("span.badge", {}, "Waiting for the player")
    : view.stuck ? h("span.badge.turn", {}, "Stuck: no move and no redeal left (undo or resign)")
    : h("span.badge.turn", {}, `${view.name || "Player"} playing`);
  const runs = view.runs ? view.runs.reduce((a, b) => a + b, 0) : 0;
  const controls = ctx.readonly ? null : view.seat == null
    ? h("p.muted", {}, "Spectating: no seat of yours at this table.")
    : h("div.controls",
        {},
        h("button.cmd", { type: "button", dataset: { type: "hint" }, disabled: !view.hint || undefined,
                          onclick: () => { st.hint = !st.hint; if (st.hint && view.hint.type === "move") st.selected = view.hint.card; redraw(); } },
          st.hint ? "Hide hint" : "Hint"),
        button("undo", "Undo"),
        button("redeal", `Redeal (${view.redeals_left} left)`),
        button("resign", "Resign"),
        hint ? h("span.hint-text", {}, label(hint)) : view.hint && st.hint ? h("span.hint-text", {}, humanize(view.hint.type)) : null);
  root.dataset.version = view.version;
  root.replaceChildren(...[
    h("div.fp-head", {}, status, h("span.muted", {},
      ` ${runs} of 48 cards seated · ${view.redeals_left} redeals left · v${view.version}`,
      view.seed_chosen ? " · chosen seed" : "")),
    controls,
    grid,
    !ctx.readonly && view.seat != null && moves.length
      ? h("p.muted", {}, st.selected ? `Now click a highlighted gap for ${cardText(st.selected)}.` : "Click a card that can move (outlined), then a gap.")
      : null].filter(Boolean));
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
