// Monopoly's table: the board as a ring of 40 squares (colour band, owner, buildings, mortgage, tokens), the
// players, the bank, the dice, and whatever the game waits for (a purchase, the income tax, an auction, a
// building shortage, debts, trades). Every button is one of the view's `legal` commands; open-ended ones (a
// bid, a trade) are filled in from their inputs. Click a property to see it and what you may do with it.
import { h, botTag, commandButtons, humanize, count } from "./common.js";
import { resignEl } from "./resign.js";
import { logPanel } from "./log.js";
import { tradeFormEl } from "./monopoly-trade.js";
import { deadline, turnClockEl, seatClockEl, forfeitWarningEl } from "./clock.js";
import { GROUP_COLOURS, HOUSE_COST, SEAT_COLOURS, JAIL, HOTEL, ICONS, PIPS, money, seatName, shortName, squareName, lotName, whereIs, jailCardName, holdingsText, label } from "./monopoly-words.js";

// ---------------------------------------------------------------- small pieces

function token(view, seat) {
  return h("span.mono-token", { dataset: { seat }, title: seatName(view, seat), style: `background:${SEAT_COLOURS[seat % 8]}` },
    String(seat + 1));
}

function ownerChip(view, seat) {
  return h("span.mono-owner", { style: `background:${SEAT_COLOURS[seat % 8]}`, title: `owned by ${seatName(view, seat)}` });
}

function cmdButton(view, ctx, c, text) {
  return h("button.cmd", { type: "button", dataset: { type: c.type, command: JSON.stringify(c) }, onclick: () => ctx.send(c) },
    text || label(view, c));
}

const legalOf = (view, ctx) => (ctx.readonly || view.seat == null ? [] : view.legal || []);

/** Square q's place in an 11 × 11 grid: GO bottom right, then clockwise (left along the bottom, up, right, down). */
function place(q) {
  if (q <= 10) return { row: 11, col: 11 - q };
  if (q <= 20) return { row: 11 - (q - 10), col: 1 };
  if (q <= 30) return { row: 1, col: 1 + (q - 20) };
  return { row: 1 + (q - 30), col: 11 };
}

function side(q) {
  if (q % 10 === 0) return "corner";
  return ["bottom", "left", "top", "right"][Math.floor(q / 10)];
}

// ---------------------------------------------------------------- the board

function squareActions(view, ctx, q) {
  return legalOf(view, ctx).filter((c) =>
    (c.square === q && ["sell_building", "mortgage", "lift_mortgage"].includes(c.type))
    || (c.type === "build" && c.sites && c.sites.length === 1 && c.sites[0] === q));
}

function buildingsEl(level) {
  if (!level) return null;
  if (level >= HOTEL) return h("span.mono-buildings", { title: "a hotel" }, h("span.mono-hotel", {}, "H"));
  return h("span.mono-buildings", { title: `${level} house${level > 1 ? "s" : ""}` },
    Array.from({ length: level }, () => h("span.mono-house")));
}

function cellEl(view, ctx, sq, redraw) {
  const { row, col } = place(sq.square);
  const here = view.seats.filter((p) => !p.bankrupt && p.position === sq.square);
  const classes = ["mono-cell", `side-${side(sq.square)}`, `t-${sq.type}`];
  if (sq.owner != null) classes.push("owned");
  if (here.length && sq.square !== JAIL) classes.push("occupied");
  if (sq.mortgaged) classes.push("mortgaged");
  if (ctx.state.selected === sq.square) classes.push("selected");
  if (squareActions(view, ctx, sq.square).length) classes.push("actionable");
  const tokens = sq.square === JAIL
    ? [h("div.mono-in-jail", { title: "In Jail" }, h("span.mono-jail-label", {}, "In Jail"),
         here.filter((p) => p.in_jail).map((p) => token(view, p.seat))),
       h("div.mono-visiting", { title: "Just Visiting" }, h("span.mono-jail-label", {}, "Just Visiting"),
         here.filter((p) => !p.in_jail).map((p) => token(view, p.seat)))]
    : h("div.mono-tokens", {}, here.map((p) => token(view, p.seat)));
  const onclick = () => {
    ctx.state.selected = ctx.state.selected === sq.square ? null : sq.square;
    redraw();
  };
  return h("div", {
    class: classes.join(" "), style: `grid-row:${row};grid-column:${col}`, title: sq.name, role: "button", tabindex: 0,
    dataset: { square: sq.square, owner: sq.owner == null ? "" : sq.owner, level: sq.level, mortgaged: sq.mortgaged ? "1" : "0" },
    onclick, onkeydown: (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); onclick(); } },
  },
    sq.group && GROUP_COLOURS[sq.group] ? h("div.mono-band", { style: `background:${GROUP_COLOURS[sq.group]}` }, buildingsEl(sq.level)) : null,
    h(`div.mono-name${shortName(sq.name).replace(/\u00ad/g, "").length > 15 ? ".long" : ""}`, {}, shortName(sq.name)),
    ICONS[sq.type] ? h("div.mono-icon", {}, sq.name === "Water Works" ? "≈" : ICONS[sq.type]) : null,
    sq.price ? h("div.mono-price", {}, money(sq.price)) : null,
    sq.owner != null ? ownerChip(view, sq.owner) : null,
    sq.mortgaged ? h("div.mono-mortgaged", { title: "mortgaged" }, "M") : null,
    tokens);
}

const JAILED = { square: "landed on Go To Jail", card: "a card", doubles: "the third doubles in a row" };

/** The last roll: whose it is, the pips and their sum, and when it sent its roller to jail, that it did and why. */
function diceEl(view) {
  if (!view.dice) return h("div.mono-dice.muted", {}, "no roll yet");
  const [a, b] = view.dice;
  const who = view.dice_by != null ? seatName(view, view.dice_by) : "";
  const jailed = view.dice_jailed ? `sent to jail (${JAILED[view.dice_jailed] || view.dice_jailed})` : "";
  return h(`div.mono-dice${jailed ? ".jailed" : ""}`,
    { dataset: { dice: `${a},${b}`, by: view.dice_by ?? "", jailed: view.dice_jailed || "" },
      title: [`${who ? `${who} rolled ` : ""}${a} + ${b} = ${a + b}`, jailed].filter(Boolean).join(": ") },
    who ? h("span.dice-by", {}, `${who} rolled `) : null,
    h("span.die", {}, PIPS[a] || a), h("span.die", {}, PIPS[b] || b),
    h("span.muted", {}, ` ${a + b}${a === b ? " doubles" : ""}`),
    jailed ? h("span.dice-jailed", {}, ` — ${jailed}`) : null);
}

function statusEl(view) {
  if (view.status === "finished") {
    return h("span.badge.done", {}, view.winner != null ? `Winner: ${seatName(view, view.winner)}` : "Finished",
      view.end_reason ? ` (${humanize(view.end_reason)})` : "");
  }
  if (view.status === "waiting") return h("span.badge", {}, "Waiting for players");
  return h("span.badge.turn", {}, `Turn: ${seatName(view, view.turn_seat)}`);
}

function centreEl(view, ctx, redraw) {
  const rounds = view.max_rounds ? `round ${view.round} of ${view.max_rounds}` : `round ${view.round}`;
  return h("div.mono-centre", {},
    h("div.mono-title", {}, "MONOPOLY"),
    statusEl(view),
    turnClockEl(view, ctx, view.turn_seat, seatName(view, view.turn_seat)),
    h("div.muted", {}, `${rounds} · v${view.version}`),
    diceEl(view),
    h("div.mono-bank", { dataset: { houses: view.houses, hotels: view.hotels } },
      "Bank: ", h("b", {}, view.houses), view.houses === 1 ? " house · " : " houses · ", h("b", {}, view.hotels), view.hotels === 1 ? " hotel" : " hotels"),
    deedEl(view, ctx, redraw));
}

/** The selected square: its facts, and what the caller may do with it (from `legal`). */
function deedEl(view, ctx, redraw) {
  const q = ctx.state.selected;
  if (q == null) {
    return legalOf(view, ctx).some((c) => ["build", "sell_building", "mortgage", "lift_mortgage"].includes(c.type))
      ? h("p.mono-tip.muted", {}, "Click a property of yours (outlined) to build, sell or mortgage.") : null;
  }
  const sq = view.board[q];
  const actions = squareActions(view, ctx, q);
  const facts = [];
  if (sq.price) facts.push(`Price ${money(sq.price)} · mortgage ${money(Math.floor(sq.price / 2))}`);
  if (HOUSE_COST[sq.group]) facts.push(`Houses ${money(HOUSE_COST[sq.group])} each`);
  facts.push(sq.owner != null ? `Owner: ${seatName(view, sq.owner)}` : sq.price ? "Owner: the bank" : "");
  if (sq.level) facts.push(sq.level >= HOTEL ? "A hotel" : `${sq.level} house${sq.level > 1 ? "s" : ""}`);
  if (sq.mortgaged) facts.push("Mortgaged");
  const here = view.seats.filter((p) => !p.bankrupt && p.position === q);
  if (here.length) facts.push(`Here: ${here.map((p) => seatName(view, p.seat) + (q === JAIL && p.in_jail ? " (in jail)" : "")).join(", ")}`);
  return h("section.mono-deed", { dataset: { square: q } },
    h("div.mono-deed-head", { style: sq.group && GROUP_COLOURS[sq.group] ? `background:${GROUP_COLOURS[sq.group]}` : "" },
      h("b", {}, sq.name),
      h("button.mono-close", { type: "button", title: "close", onclick: () => { ctx.state.selected = null; redraw(); } }, "×")),
    facts.filter(Boolean).map((f) => h("div.small", {}, f)),
    actions.length ? h("div.buttons", {}, actions.map((c) => cmdButton(view, ctx, c))) : null);
}

function boardEl(view, ctx, redraw) {
  return h("div.mono-board", { role: "grid" },
    view.board.map((sq) => cellEl(view, ctx, sq, redraw)),
    centreEl(view, ctx, redraw));
}

// ---------------------------------------------------------------- players

function playerEl(view, ctx, p, redraw) {
  const owned = view.board.filter((sq) => sq.owner === p.seat);
  const classes = ["player", "mono-player"];
  if (p.seat === view.turn_seat && view.status === "playing") classes.push("on-turn");
  if (p.seat === view.seat) classes.push("me");
  if (p.seat === view.winner) classes.push("winner");
  if (p.bankrupt) classes.push("bankrupt");
  if (p.forfeited) classes.push("forfeited");
  return h("section", {
    class: classes.join(" "),
    dataset: { seat: p.seat, cash: p.cash, worth: p.worth, position: p.position, inJail: p.in_jail ? "1" : "0",
               jailCards: p.jail_cards.length, bankrupt: p.bankrupt ? "1" : "0" },
  },
    h("h3", {}, token(view, p.seat), seatName(view, p.seat), botTag(p),
      p.bankrupt ? h("span.tag.mono-bankrupt", {}, "bankrupt") : null,
      p.resigned ? h("span.tag.resigned-tag", {}, "resigned") : null,
      p.in_jail ? h("span.tag.mono-jailed", {}, `in jail${p.jail_tries ? ` · ${count(p.jail_tries, "try", "tries")}` : ""}`) : null),
    seatClockEl(view, p),
    h("div.stat", {}, "Cash ", h("b.mono-cash", {}, money(p.cash)), h("span.muted", {}, ` · worth ${money(p.worth)}`),
      p.bankrupt ? null : h("span.muted", {}, ` · ${whereIs(view, p)}`)),
    p.jail_cards.length ? h("div.small", {}, p.jail_cards.map(jailCardName).join(", ")) : null,
    owned.length ? h("div.mono-deeds", {}, owned.map((sq) =>
      h("button.mono-chip", {
        type: "button", title: sq.name + (sq.mortgaged ? " (mortgaged)" : ""), dataset: { square: sq.square },
        class: `mono-chip${sq.mortgaged ? " mortgaged" : ""}`,
        style: `border-left-color:${GROUP_COLOURS[sq.group] || "#999"}`,
        onclick: () => { ctx.state.selected = sq.square; redraw(); },
      }, sq.name.replace(/ (Avenue|Place|Railroad|Gardens)$/, ""), sq.level ? ` ${sq.level >= HOTEL ? "H" : "⌂" + sq.level}` : ""))) : null);
}

// ---------------------------------------------------------------- the waits

function offerEl(view, ctx) {
  const o = view.offer;
  if (!o) return null;
  const mine = o.seat === view.seat && !ctx.readonly;
  const answers = legalOf(view, ctx).filter((c) => ["buy", "decline", "choose_tax"].includes(c.type));
  const what = o.kind === "buy"
    ? `${seatName(view, o.seat)} landed on ${squareName(view, o.square)} (${money(o.price)}): buy it, or the bank auctions it.`
    : `${seatName(view, o.seat)} landed on Income Tax: $200 or 10% of worth.`;
  return h(`section.prompt.mono-offer${mine ? "" : ".waiting"}`, { dataset: { pending: o.kind } },
    h("h3", {}, o.kind === "buy" ? "For sale" : "Income Tax", " ", deadline(o.deadline_at, ctx)),
    h("p", {}, what),
    mine && answers.length ? h("div.buttons", {}, answers.map((c) => cmdButton(view, ctx, c))) : null);
}

function auctionEl(view, ctx) {
  const a = view.auction;
  if (!a) return null;
  const legal = legalOf(view, ctx);
  const bid = legal.find((c) => c.type === "bid");
  const pass = legal.find((c) => c.type === "pass_bid");
  const st = ctx.state;
  if (st.bidLot !== `${JSON.stringify(a.lot)}:${a.min_bid}`) {   // a new lot or a higher bid: prefill the minimum
    st.bidLot = `${JSON.stringify(a.lot)}:${a.min_bid}`;
    st.bid = a.min_bid;
  }
  const me = view.seat != null ? view.seats[view.seat] : null;
  const input = h("input#mono-bid", { type: "number", name: "amount", min: a.min_bid, max: me ? me.cash : undefined, step: 1,
                                       value: st.bid, oninput: (e) => { st.bid = e.target.value; } });
  const bidders = a.bidders.map((s) => h("span", {
    class: `mono-bidder${a.passed.includes(s) ? " passed" : ""}${a.high_seat === s ? " high" : ""}`, dataset: { seat: s },
  }, token(view, s), seatName(view, s), a.passed.includes(s) ? " (passed)" : a.high_seat === s ? " (high)" : ""));
  return h("section.prompt.mono-auction", { dataset: { pending: "auction", lot: JSON.stringify(a.lot) } },
    h("h3", {}, "Auction: ", lotName(view, a.lot), " ", deadline(a.deadline_at, ctx)),
    h("p", {}, a.high_seat != null
      ? ["High bid ", h("b.mono-high-bid", {}, money(a.high_bid)), " by ", seatName(view, a.high_seat)]
      : "No bid yet", ` · next bid at least ${money(a.min_bid)}`, a.lots_after ? ` · ${count(a.lots_after, "more lot")} after this` : ""),
    h("div.mono-bidders", {}, bidders),
    bid || pass ? h("form.mono-bid-form", { onsubmit: (e) => {
      e.preventDefault();
      const amount = Math.floor(Number(st.bid));
      if (bid && amount >= a.min_bid) ctx.send({ type: "bid", amount });
    } },
      bid ? [input, h("button.cmd", { type: "submit", dataset: { type: "bid" } }, "Bid")] : null,
      pass ? cmdButton(view, ctx, pass) : null) : null);
}

function shortageEl(view, ctx) {
  const w = view.shortage;
  if (!w) return null;
  const claims = legalOf(view, ctx).filter((c) => c.type === "claim_buildings");
  return h("section.prompt.mono-shortage", { dataset: { pending: "shortage" } },
    h("h3", {}, `Building shortage: ${count(w.bank, w.kind)} left in the bank `, deadline(w.deadline_at, ctx)),
    h("ul", {}, w.claims.map((c) => h("li", {}, `${seatName(view, c.seat)} wants ${c.sites.length} for `,
      c.sites.map((q) => squareName(view, q)).join(", ") || "nothing"))),
    w.awaited.length ? h("p.muted", {}, "Waiting for ", w.awaited.map((s) => seatName(view, s)).join(", ")) : null,
    claims.length ? claimForm(view, ctx, claims) : null);
}

/** `legal` lists a claim one site at a time: the form asks how many for each, and claims them built evenly
 * (one on each site per pass), with "Claim nothing" beside it. */
function claimForm(view, ctx, claims) {
  const none = claims.find((c) => c.sites.length === 0);
  const sites = claims.filter((c) => c.sites.length === 1).map((c) => c.sites[0]);
  const st = ctx.state;
  if (st.claimWindow !== view.shortage.deadline_at) {   // a new window: nothing asked for yet
    st.claimWindow = view.shortage.deadline_at;
    st.claimCounts = new Map();
  }
  const counts = st.claimCounts;
  const send = (e) => {
    e.preventDefault();
    const wanted = [];
    for (let pass = 0; pass < 5; pass++) for (const q of sites) if ((counts.get(q) || 0) > pass) wanted.push(q);
    if (wanted.length) ctx.send({ type: "claim_buildings", sites: wanted });
  };
  return h("form.mono-claim", { onsubmit: send },
    sites.map((q) => h("label.mono-pick", {}, squareName(view, q), " ",
      h("input", { type: "number", name: `claim-${q}`, min: 0, max: 5, value: counts.get(q) || 0, size: 2,
                   oninput: (e) => counts.set(q, Math.max(0, Math.floor(Number(e.target.value) || 0))) }))),
    h("div.buttons", {},
      sites.length ? h("button.cmd", { type: "submit", dataset: { type: "claim_buildings" } }, "Claim") : null,
      none ? cmdButton(view, ctx, none) : null));
}

function debtsEl(view, ctx) {
  if (!view.debts || !view.debts.length) return null;
  const legal = legalOf(view, ctx).filter((c) => c.type === "declare_bankruptcy");
  const mine = view.debts.some((d) => d.seat === view.seat) && !ctx.readonly;
  return h(`section.prompt.mono-debts${mine ? "" : ".waiting"}`, { dataset: { pending: "debt" } },
    h("h3", {}, "Debts"),
    h("ul", {}, view.debts.map((d) => h("li", { dataset: { seat: d.seat } },
      `${seatName(view, d.seat)} owes ${seatName(view, d.creditor)} ${money(d.amount)} (${humanize(d.reason)}) `, deadline(d.deadline_at, ctx)))),
    mine ? h("p.small", {}, "Raise the cash by selling buildings, mortgaging (click a property) or trading: the debt is paid as soon as you hold enough.") : null,
    legal.length ? h("div.buttons", {}, legal.map((c) => cmdButton(view, ctx, c))) : null);
}

function tradesEl(view, ctx) {
  const trades = view.trades || [];
  if (!trades.length) return null;
  const legal = legalOf(view, ctx);
  const answers = (t) => legal.filter((c) => ["accept_trade", "reject_trade", "withdraw_trade"].includes(c.type) && c.trade === t.trade);
  return h("section.prompt.mono-trades", { dataset: { pending: "trade" } },
    h("h3", {}, "Trade offers"),
    trades.map((t) => h("div.mono-trade", { dataset: { trade: t.trade, seat: t.seat, to: t.to } },
      h("p", {}, h("b", {}, seatName(view, t.seat)), " offers ", h("b", {}, seatName(view, t.to)), " ",
        holdingsText(view, t.give), " for ", holdingsText(view, t.get), " ", deadline(t.deadline_at, ctx)),
      answers(t).length ? h("div.buttons", {}, answers(t).map((c) => cmdButton(view, ctx, c))) : null)));
}

// ---------------------------------------------------------------- the page

const HANDLED = new Set(["buy", "decline", "choose_tax", "bid", "pass_bid", "claim_buildings", "build", "sell_building",
                         "mortgage", "lift_mortgage", "offer_trade", "accept_trade", "reject_trade", "withdraw_trade",
                         "declare_bankruptcy", "resign"]);  // resign: its own control, which asks first (resign.js)

const FORFEIT_WORDS = { out: "bankrupt to the bank, which auctions your properties",
                        reset: "A roll of your own (or leaving jail) starts the count again." };

function awaitsMe(view) {
  return Boolean(view.pending && (view.pending.seats || [view.pending.seat]).includes(view.seat));
}

function movesEl(view, ctx) {
  if (ctx.readonly) return null;
  if (view.seat == null) return h("p.muted", {}, "Spectating: no seat of yours at this table.");
  const turn = legalOf(view, ctx).filter((c) => !HANDLED.has(c.type));
  const selling = legalOf(view, ctx).filter((c) => ["build", "sell_building", "mortgage", "lift_mortgage"].includes(c.type)).length;
  return h("section.legal.mono-moves", {}, h("h3", {}, "Your moves"),
    turn.length ? commandButtons(turn, (c) => label(view, c), ctx.send) : null,
    selling ? h("p.muted.small", {}, `${count(selling, "building or mortgage move")}: click one of your properties (outlined).`) : null,
    !turn.length && !selling ? h("p.muted", {}, view.status === "finished" ? "The game is over."
      : awaitsMe(view) ? "Your answer is awaited above." : "Nothing to do right now.") : null);
}

/** Every command button's words for `view`, as the table draws them wherever they sit (tests/web: no two of a view
 *  read the same): a bid and a claim are typed into a form whose button says "Bid" or "Claim", and a build on more than
 *  one site is no button (each property's own builds one). */
export function buttonLabels(view) {
  const legal = view.legal || [];
  const form = (c) => c.type === "bid" || (c.type === "claim_buildings" && c.sites.length) || (c.type === "build" && c.sites.length !== 1);
  return [...legal.filter((c) => !form(c)).map((c) => label(view, c)),
          ...(legal.some((c) => c.type === "bid") ? ["Bid"] : []),
          ...(legal.some((c) => c.type === "claim_buildings" && c.sites.length) ? ["Claim"] : [])];
}

/** Re-rendering replaces the DOM: keep the caret in the input being typed in. */
function keepFocus(root, build) {
  const active = document.activeElement;
  const key = active && root.contains(active) && (active.id || active.name)
    ? { id: active.id, name: active.name, start: active.selectionStart, end: active.selectionEnd } : null;
  build();
  if (!key) return;
  const el = key.id ? root.querySelector(`#${CSS.escape(key.id)}`) : root.querySelector(`[name="${CSS.escape(key.name)}"]`);
  if (!el || el.type === "checkbox") return;
  el.focus();
  try { if (key.start != null) el.setSelectionRange(key.start, key.end); } catch { /* number inputs have no selection */ }
}

const RESIGN_WORDS = "It is bankruptcy to the bank: your buildings are sold back, your cash goes to the bank and your "
  + "properties are auctioned.";

function render(root, view, ctx) {
  root.dataset.version = view.version;
  if (!view.board || !view.seats) {
    root.replaceChildren(h("p.muted", {}, "Waiting for the table…"));
    return;
  }
  const redraw = () => render(root, view, ctx);
  keepFocus(root, () => root.replaceChildren(
    h("div.mono", {},
      h("div.mono-main", {}, boardEl(view, ctx, redraw)),
      h("div.mono-side-col", {},
        ...[forfeitWarningEl(view, ctx, view.seats[view.seat], FORFEIT_WORDS),
            debtsEl(view, ctx), offerEl(view, ctx), auctionEl(view, ctx), shortageEl(view, ctx), movesEl(view, ctx),
            resignEl(view, ctx, redraw, RESIGN_WORDS),
            tradesEl(view, ctx), tradeFormEl(view, ctx, redraw),
            h("div.mono-players", {}, view.seats.map((p) => playerEl(view, ctx, p, redraw))), logPanel(view, ctx)].filter(Boolean)))));
}

// ---------------------------------------------------------------- the lobby's options

function optionFields() {
  return [
    h("label", { title: "end after this many rounds, the largest worth winning (empty: play until one is left)" },
      "Rounds ", h("input", { name: "max_rounds", type: "number", min: 1, max: 10000, placeholder: "∞", size: 4 })),
    h("label", { title: "how long every wait on a player lasts" },
      "Answer in ", h("input", { name: "response_seconds", type: "number", min: 1, max: 3600, value: 30, size: 4 }), " s"),
  ];
}

function readOptions(elements) {
  const options = {};
  const rounds = elements.max_rounds && elements.max_rounds.value;
  if (rounds) options.max_rounds = Number(rounds);
  const seconds = elements.response_seconds && elements.response_seconds.value;
  if (seconds) options.response_seconds = Number(seconds);
  return options;
}

export default {
  kind: "monopoly",
  title: "Monopoly",
  bots: ["strategic", "random"],
  seats: { min: 2, max: 8, default: 4 },
  options: () => ({ response_seconds: 30 }),
  optionFields,
  readOptions,
  render,
  label,
};
