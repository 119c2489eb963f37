// Monopoly's trade form (monopoly.js draws the rest of the table): what the player gives and asks of another player
// still in, picked from each side's cash, properties and Get Out of Jail Free cards, sent as one `offer_trade`.
import { h, count } from "./common.js";
import { GROUP_COLOURS, HOTEL, seatName, jailCardName } from "./monopoly-words.js";

function holdingsOf(view, seat) {
  return {
    squares: view.board.filter((sq) => sq.owner === seat),
    cards: view.seats[seat].jail_cards,
  };
}

/** `legal` never lists offer_trade (what to offer is the player's to invent): any player still in may offer
 * one to another, one offer open at a time; the service checks the rest. */
export function tradeFormEl(view, ctx, redraw) {
  if (ctx.readonly || view.seat == null || view.status !== "playing" || view.seats[view.seat].bankrupt) return null;
  const targets = view.seats.filter((p) => p.seat !== view.seat && !p.bankrupt).map((p) => p.seat);
  if (!targets.length) return null;
  if ((view.trades || []).some((t) => t.seat === view.seat)) {
    return h("section.mono-trade-form", {}, h("p.muted.small", {}, "Your trade offer is open: wait for its answer, or withdraw it to make another."));
  }
  const st = ctx.state;
  if (!st.trade || !targets.includes(st.trade.to)) {
    st.trade = { to: targets[0], give: { cash: 0, squares: [], cards: [] }, get: { cash: 0, squares: [], cards: [] } };
  }
  const t = st.trade;
  const sideEl = (key, seat) => {
    const mine = holdingsOf(view, seat);
    const s = t[key];
    const toggle = (list, value) => (e) => {
      const i = list.indexOf(value);
      if (e.target.checked && i < 0) list.push(value);
      if (!e.target.checked && i >= 0) list.splice(i, 1);
    };
    return h(`fieldset.mono-side`, { dataset: { side: key } },
      h("legend", {}, key === "give" ? "You give" : `${seatName(view, seat)} gives`),
      h("label", {}, "Cash $", h("input", { type: "number", name: `${key}-cash`, min: 0, max: view.seats[seat].cash, step: 1,
                                            value: s.cash, oninput: (e) => { s.cash = e.target.value; } })),
      mine.squares.map((sq) => h("label.mono-pick", {},
        h("input", { type: "checkbox", name: `${key}-square`, value: sq.square, checked: s.squares.includes(sq.square) || undefined,
                     onchange: toggle(s.squares, sq.square) }),
        h("span.mono-swatch", { style: `background:${GROUP_COLOURS[sq.group] || "#999"}` }),
        sq.name, sq.mortgaged ? " (mortgaged)" : "", sq.level ? ` (${sq.level >= HOTEL ? "a hotel" : count(sq.level, "house")})` : "")),
      mine.cards.map((c) => h("label.mono-pick", {},
        h("input", { type: "checkbox", name: `${key}-card`, value: c, checked: s.cards.includes(c) || undefined, onchange: toggle(s.cards, c) }),
        jailCardName(c))),
      !mine.squares.length && !mine.cards.length ? h("p.muted.small", {}, "no properties or cards") : null);
  };
  const holdings = (s) => {
    const out = {};
    const cash = Math.floor(Number(s.cash) || 0);
    if (cash > 0) out.cash = cash;
    if (s.squares.length) out.squares = [...s.squares].sort((a, b) => a - b);
    if (s.cards.length) out.jail_cards = [...s.cards];
    return out;
  };
  const open = st.tradeOpen;
  return h("section.mono-trade-form", {},
    h("details", { open: open || undefined },
      h("summary", { onclick: (e) => { e.preventDefault(); st.tradeOpen = !open; redraw(); } }, "Offer a trade"),
      h("form#mono-trade", { onsubmit: (e) => {
        e.preventDefault();
        ctx.send({ type: "offer_trade", to: t.to, give: holdings(t.give), get: holdings(t.get) });
        st.trade = null;
      } },
        h("label", {}, "To ", h("select", { name: "to", onchange: (e) => {
          t.to = Number(e.target.value);
          t.get = { cash: 0, squares: [], cards: [] };
          redraw();
        } }, targets.map((s) => h("option", { value: s, selected: s === t.to || undefined }, seatName(view, s))))),
        h("div.mono-sides", {}, sideEl("give", view.seat), sideEl("get", t.to)),
        h("button.cmd", { type: "submit", dataset: { type: "offer_trade" } }, "Offer"))));
}
