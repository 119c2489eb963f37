// The Free Parking card game's table: meters, Point cards, the caller's hand, the turn, and every legal
// command as a button (with the Talk Your Way Out of It prompt when the caller's answer is awaited).
import { h, botTag, commandButtons, humanize } from "./common.js";
import { withLog } from "./log.js";
import { resignEl } from "./resign.js";
import { deadline, turnClockEl, seatClockEl, forfeitWarningEl } from "./clock.js";

const METER_MAX = 60;
const WINNING_POINTS = 200;
const NAMES = { M: "Feed the Meter", P: "Point", OJ: "Officer Jones", TW: "Talk Your Way Out of It",
                FP: "Free Parking", TE: "Time Expires" };
const KINDS = { feed_meter: "M", point: "P", officer_jones: "OJ", talk_your_way_out: "TW",
                free_parking: "FP", time_expires: "TE" };

/** "M20-3" → "Feed the Meter 20"; "SC-set_60-1" → "Second Chance “meter to 60”", as the move log names it. */
export function cardName(id) {
  if (id == null) return "";
  const sc = /^SC-(.+)-\d+$/.exec(id);
  if (sc) return `Second Chance “${EFFECT_NAMES[sc[1]] || sc[1].replace(/_/g, " ")}”`;
  const m = /^([A-Z]+?)(\d*)-\d+$/.exec(id);
  if (!m || !NAMES[m[1]]) return id;
  return m[2] ? `${NAMES[m[1]]} ${m[2]}` : NAMES[m[1]];
}

function cardValue(id) {
  const m = /^[A-Z]+(\d+)-/.exec(id || "");
  return m ? Number(m[1]) : 0;
}

function meterOf(view, seat) {
  const p = (view.players || []).find((x) => x.seat === seat);
  return p ? p.meter : "?";
}

function plainName(view, seat) {
  const p = (view.players || []).find((x) => x.seat === seat);
  return (p && p.name) || `Seat ${seat}`;
}

function seatName(view, seat) {
  const name = plainName(view, seat);
  return seat === view.seat ? `${name} (you)` : name;
}

// A Second Chance card's effect in the move log's words (service/rules/free_parking/audit.py, _SHORT): one wording
const EFFECT_NAMES = {
  take_point: "take a Point card, unseen", give_point: "give a Point card", lose_point: "lose a Point card",
  trade_places: "trade places", add_20: "+20 minutes", add_40: "+40 minutes", set_60: "meter to 60", minus_20: "−20 minutes",
  violation: "meter to Violation", all_minus_20: "every opponent −20 minutes", draw_2: "draw 2 playing cards",
};

const FORFEIT_WORDS = { out: "you play no more, your turns are skipped and you cannot win",
                        reset: "A main play of your own starts the count again." };

export function label(view, c) {
  const card = c.card !== undefined ? cardName(c.card) : "";
  switch (c.type) {
    case "feed_meter": return c.card ? `Feed the meter: ${card}` : "Feed the meter";
    case "run_errand": return c.card ? `Run errand: ${card} (${cardValue(c.card)} minutes off the meter)` : "Run an errand";
    case "free_parking": return c.card ? `Free Parking + ${cardName(c.errand)}` : "Free Parking";
    case "time_expires": return c.card ? `Time Expires on ${seatName(view, c.target)} (meter ${meterOf(view, c.target)} → 0)` : "Time Expires";
    case "swap_three": return c.cards ? `Swap ${c.cards.map(cardName).join(", ")}` : "Swap three";
    case "discard": return c.card ? `Discard ${card}` : "Discard";
    case "draw_second_chance": return "Draw a Second Chance card";
    case "end_turn": return "End turn";
    case "officer_jones": return c.card ? `Officer Jones on ${seatName(view, c.target)}` : "Officer Jones";
    case "talk_out": return `Talk Your Way Out of It (${card})`.replace(" (Talk Your Way Out of It)", "");
    case "accept": return "Accept";
    case "resign": return "Resign";
    case "choose":
      if (c.card !== undefined) return `Choose ${card}`;
      if (c.target !== undefined) return `Choose ${seatName(view, c.target)}`;
      if (c.position !== undefined) return `Choose position ${c.position}`;
      return "Choose";
    default: {
      const rest = { ...c };
      delete rest.type;
      return humanize(c.type) + (Object.keys(rest).length ? ` ${JSON.stringify(rest)}` : "");
    }
  }
}

/** The labels of `commands`, told apart where two would read the same (two Time Expires cards on one opponent, two
 *  Feed the Meter 20 to discard, Free Parking with either of two Point 30 cards): by the place of the card that differs
 *  — in the hand, as the hand numbers its look-alike cards, or among the caller's Point cards. Returns a `label` for
 *  commandButtons. */
export function distinctLabels(view, commands) {
  const text = new Map(commands.map((c) => [c, label(view, c)]));
  const alike = new Map();
  for (const [c, t] of text) alike.set(t, [...(alike.get(t) || []), c]);
  const hand = ((view.you && view.you.hand) || []).map((c) => c.id);
  const me = (view.players || []).find((p) => p.seat === view.seat);
  const points = ((me && me.point_cards) || []).map((c) => c.id);
  const place = (id) => {
    if (hand.includes(id)) return `card ${hand.indexOf(id) + 1} of your hand`;
    return points.includes(id) ? `your Point card ${points.indexOf(id) + 1}` : id;
  };
  for (const [t, group] of alike) {
    if (group.length < 2) continue;
    // the cards that tell the commands apart: the card played, or the Point card run with Free Parking, or both
    const differ = CARD_FIELDS.filter((k) => new Set(group.map((c) => c[k])).size > 1);
    for (const c of group) {
      const which = differ.filter((k) => c[k] !== undefined);
      if (!which.length) continue;
      text.set(c, which.length === 1 && which[0] === "card"
        ? `${t} · ${place(c.card)}` : `${t} · ${which.map((k) => `${cardName(c[k])}: ${place(c[k])}`).join(", ")}`);
    }
  }
  return (c) => text.get(c) || label(view, c);
}

const CARD_FIELDS = ["card", "errand"];

/** The commands the table draws as buttons, apart: the answers a prompt of the caller's asks for, and "Your moves"
 *  (swap three is picked from the hand instead, and resign asks first: resign.js). */
export function buttonGroups(view) {
  const legal = view.legal || [];
  const asked = view.pending && view.pending.seat === view.seat;
  const answer = (c) => asked && ANSWERS.includes(c.type);
  const drawn = (c) => c.type !== "swap_three" && c.type !== "resign";   // each has its own control
  return { answers: legal.filter(answer), moves: legal.filter((c) => !answer(c) && drawn(c)) };
}

const ANSWERS = ["talk_out", "accept", "choose"];

/** Every command button's words for `view`, as the table draws them (tests/web: no two of a view read the same). */
export function buttonLabels(view) {
  const { answers, moves } = buttonGroups(view);
  const a = distinctLabels(view, answers);
  const m = distinctLabels(view, moves);
  return [...answers.map(a), ...moves.map(m)];
}

/** Where the hand holds two cards of one name, their places in it (1, 2…): the buttons' "card 3 of your hand". */
function handPlaces(hand) {
  const names = hand.map((c) => cardName(c.id));
  return names.map((n, i) => (names.indexOf(n) !== names.lastIndexOf(n) ? i + 1 : null));
}

/** What a card does, in the rule book's words (docs/rules-free-parking.md). */
export function cardDoes(card) {
  const v = card.value;
  switch (card.kind) {
    case "feed_meter": return `Main play: adds ${v} minutes to your meter (up to 60).`;
    case "point": return `Main play, an errand: scores ${v} points and takes ${v} minutes off your meter.`;
    case "free_parking": return "Main play with a Point card: the errand scores and no time is taken off.";
    case "time_expires": return "Main play against an opponent: their meter goes to 0 (Violation).";
    case "officer_jones": return "Any time: against an opponent at Violation with Point cards down; they discard one.";
    case "talk_your_way_out": return "Cancels an action against you, when you are asked to answer it.";
    default: return "";
  }
}

const MAIN_PLAYS = ["feed_meter", "run_errand", "free_parking", "time_expires"];

/** Why `card` in the caller's hand cannot be played now ("" when it can), from the view's `legal` and the rules. */
export function whyNot(view, card) {
  const legal = view.legal || [];
  if (view.status !== "playing") return "";   // a hand shown after the game (or before it): nothing to explain
  if (legal.some((c) => (c.card === card.id || c.errand === card.id) && c.type !== "discard" && c.type !== "swap_three")) return "";
  const p = view.pending;
  const me = (view.players || []).find((x) => x.seat === view.seat);
  if (p && p.seat !== view.seat) return `Not now: awaiting ${seatName(view, p.seat)}'s ${p.kind === "respond" ? "response" : "choice"}.`;
  if (p && p.seat === view.seat) return p.kind === "respond" ? "Not now: answer first (accept, or talk your way out)." : "Not now: make your choice first.";
  if (card.kind === "officer_jones") return "No opponent is at Violation with Point cards down.";
  if (card.kind === "talk_your_way_out") return "Only when an action against you awaits your answer.";
  if (view.turn !== view.seat) return "Not your turn.";
  if (view.phase !== "main") return "You have made your main play this turn.";
  if (card.kind === "point" && me && card.value > me.meter) return `Meter ${me.meter} is too low for this ${card.value}-minute errand (Free Parking would do it).`;
  if (card.kind === "free_parking") return "Needs a Point card in your hand to go with it.";
  if (!legal.some((c) => MAIN_PLAYS.includes(c.type))) return "Not your main play now.";
  return "Not playable now.";
}

function cardEl(card, { view = null, pick = null, place = null } = {}) {
  const code = KINDS[card.kind] || "X";
  const does = cardDoes(card);
  const why = view ? whyNot(view, card) : "";
  const classes = [`div.card.k-${code}`, why ? ".unplayable" : "", pick ? ".pickable" : "", pick && pick.picked ? ".picked" : ""].join("");
  return h(classes, {
    dataset: { card: card.id, why: why || undefined },
    title: [cardName(card.id), does, why].filter(Boolean).join("\n"),
    onclick: pick ? pick.toggle : undefined,
    role: pick ? "button" : undefined, "aria-pressed": pick ? String(Boolean(pick.picked)) : undefined,
  },
    place ? h("span.card-place", { title: `card ${place} of your hand` }, place) : null,
    h("span.card-name", {}, cardName(card.id)),
    card.value != null && card.kind !== "feed_meter" && card.kind !== "point" ? h("span.card-value", {}, card.value) : null,
    view && does ? h("span.card-does", {}, does) : null,
    view && why ? h("span.card-why", {}, why) : null);
}

function meterEl(value) {
  const pct = Math.max(0, Math.min(100, (100 * value) / METER_MAX));
  return h("div.meter", { title: `meter ${value} of ${METER_MAX}` },
    h("div.meter-fill", { style: `width:${pct}%` }), h("span.meter-value", {}, value));
}

function pendingEl(view, ctx) {
  const p = view.pending;
  if (!p) return null;
  const mine = p.seat === view.seat && !ctx.readonly;
  const action = p.action;
  const what = action
    ? `${seatName(view, action.by)} played ${cardName(action.card)}${action.target != null ? ` on ${seatName(view, action.target)}` : ""}.`
    : "";
  const whose = answerNote(view, p);
  if (mine) {
    const { answers } = buttonGroups(view);
    const canTalk = answers.some((c) => c.type === "talk_out");
    const ask = p.kind === "respond"
      ? (canTalk ? "Talk your way out of it, or accept?" : "You hold no Talk Your Way Out of It card: accept.")
      : choicePrompt(view, p);
    return h("section.prompt", { dataset: { pending: p.kind, respondent: p.respondent || "" } },
      h("h3", {}, "Your answer is awaited"),
      h("p", {}, what, whose, " ", ask, " ", deadline(p.deadline_at, ctx)),
      commandButtons(answers, distinctLabels(view, answers), ctx.send, { fold: 99 }));
  }
  return h("section.prompt.waiting", { dataset: { pending: p.kind, respondent: p.respondent || "" } },
    h("p", {}, what, whose, " Waiting for ", seatName(view, p.seat), ` to ${p.kind === "respond" ? "respond" : "choose a " + p.kind} `,
      deadline(p.deadline_at, ctx)));
}

/** A choice in the game's words: "Second Chance “lose a Point card” — choose the one you lose". */
export function choicePrompt(view, p) {
  const a = p.action || {};
  const card = a.card || "";
  const source = card.startsWith("SC-") ? `Second Chance “${EFFECT_NAMES[a.kind] || humanize(a.kind || "")}”` : cardName(card) || "Choose";
  const what = {
    "lose_point:card": "choose the one you lose",
    "give_point:card": "choose the one you give",
    "give_point:target": "choose who gets it",
    "take_point:target": "choose whom to take a Point card from",
    "take_point:position": "pick one of the face-down cards",
    "trade_places:target": "choose whom to trade places with",
    "officer_jones:card": "choose the Point card you discard",
  }[`${a.kind}:${p.kind}`] || `choose a ${p.kind}`;
  return `${source} — ${what}:`;
}

// Which answer a wait is: a trade of places asks the named player, then the drawer (pending.respondent, asked_next).
function answerNote(view, p) {
  if (p.kind !== "respond" || !p.action || p.action.kind !== "trade_places") return "";
  if (p.respondent === "drawer") return " The trade takes the drawer's place too: the drawer's answer, second of two.";
  const next = (p.asked_next || []).map((s) => seatName(view, s)).join(", ");
  return next ? ` The named player's answer, first of two; then ${next}.` : "";
}

/** What "Your moves" says when it has no button: why, and whom the table waits for. */
function idleWords(view) {
  if (view.status === "finished") return "The game is over.";
  if (view.status !== "playing") return "The game starts when every seat is taken.";
  const p = view.pending;
  if (p && p.seat === view.seat) return "Your answer is awaited above.";
  if (p) return `Waiting for ${seatName(view, p.seat)} to ${p.kind === "respond" ? "answer" : "choose"}.`;
  if (view.turn !== view.seat) return `Waiting for ${seatName(view, view.turn)}'s turn.`;
  return "Nothing to do right now.";
}

function render(root, view, ctx) {
  root.dataset.version = view.version;
  const playing = view.status === "playing";
  const status = view.status === "finished"
    ? h("span.badge.done", {}, view.winner != null ? `Winner: ${seatName(view, view.winner)}` : "Finished")
    : view.status === "waiting" ? h("span.badge", {}, "Waiting for players")
    : h("span.badge.turn", {}, `Turn: ${seatName(view, view.turn)} · ${humanize(view.phase)}`);
  const players = h("div.players", {}, (view.players || []).map((p) =>
    h("section.player", {
      class: ["player", p.seat === view.turn && playing ? "on-turn" : "", p.seat === view.seat ? "me" : "",
              p.seat === view.winner ? "winner" : "", p.forfeited ? "forfeited" : "", p.resigned ? "resigned" : ""].join(" "),
      dataset: { seat: p.seat, meter: p.meter, points: p.points, handSize: p.hand_size },
    },
      h("h3", {}, seatName(view, p.seat), botTag(p),
        p.resigned ? h("span.tag.resigned-tag", {}, "resigned") : null),
      seatClockEl(view, p),
      h("div.stat", {}, "Meter ", meterEl(p.meter)),
      h("div.stat", {}, "Points ", h("b.points-value", {}, p.points), ` / ${WINNING_POINTS}`,
        view.mode === "tournament" ? ` · total ${p.total}` : "", ` · ${p.hand_size} in hand`),
      h("div.cards.point-cards", {}, p.point_cards.length ? p.point_cards.map(cardEl) : h("span.muted", {}, "no Point cards")),
      p.hand && p.seat !== view.seat ? h("div.cards.hand.revealed", {}, h("span.muted", {}, "hand: "), p.hand.map(cardEl)) : null,
    )));
  const swaps = (view.legal || []).filter((c) => c.type === "swap_three");
  const st = ctx.state;
  if (!swaps.length || st.swapAt !== view.version) st.swap = null;   // a new version: any pick starts again
  const redraw = () => render(root, view, ctx);
  const pickFor = (card) => st.swap ? {
    picked: st.swap.includes(card.id),
    toggle: () => {
      const i = st.swap.indexOf(card.id);
      if (i >= 0) st.swap.splice(i, 1); else if (st.swap.length < 3) st.swap.push(card.id);
      redraw();
    },
  } : null;
  const chosen = st.swap && st.swap.length === 3
    ? swaps.find((c) => [...c.cards].sort().join() === [...st.swap].sort().join()) : null;
  const swapBox = ctx.readonly || !swaps.length ? null : st.swap
    ? h("div.swap-pick#swap-pick", {}, `Swap three: pick three cards of your hand (${st.swap.length} of 3 picked). `,
        h("button#swap-confirm", { type: "button", disabled: !chosen, onclick: () => { st.swap = null; ctx.send(chosen); } },
          chosen ? `Swap ${chosen.cards.map(cardName).join(", ")}` : "Swap these three"),
        " ", h("button#swap-cancel", { type: "button", onclick: () => { st.swap = null; redraw(); } }, "Cancel"))
    : h("div.swap-pick", {}, h("button#swap-start", { type: "button", onclick: () => { st.swap = []; st.swapAt = view.version; redraw(); } },
        "Swap three…"), h("span.muted", {}, " discard three cards of your choice and draw three new ones (your main play)"));
  const places = view.you && view.you.hand ? handPlaces(view.you.hand) : [];
  const you = view.you && view.you.hand
    ? h("section.you", {}, h("h3", {}, "Your hand"),
        h("div.cards.hand.own", {}, view.you.hand.map((c, i) =>
          cardEl(c, { view: ctx.readonly ? null : view, pick: pickFor(c), place: places[i] }))), swapBox)
    : null;
  const decks = view.decks
    ? h("div.decks.muted", {}, `Deck ${view.decks.playing} · Second Chance ${view.decks.second_chance}`,
        view.decks.discard.length ? [" · discard top: ", cardName(view.decks.discard[view.decks.discard.length - 1].id)] : "")
    : null;
  const pending = pendingEl(view, ctx);
  const others = buttonGroups(view).moves;
  const commands = ctx.readonly ? null
    : view.seat == null ? h("p.muted", {}, "Spectating: no seat of yours at this table.")
    : h("section.legal", {}, h("h3", {}, "Your moves"),
        others.length ? commandButtons(others, distinctLabels(view, others), ctx.send) : h("p.muted", {}, idleWords(view)));
  root.replaceChildren(withLog(view, ctx, ...[
    h("div.fp-head", {}, status, turnClockEl(view, ctx, view.turn, plainName(view, view.turn)),
      h("span.muted", {}, ` round ${view.round} · turn ${view.turn_number} · v${view.version}`), decks),
    forfeitWarningEl(view, ctx, (view.players || []).find((p) => p.seat === view.seat), FORFEIT_WORDS),
    pending, players, you, commands,
    resignEl(view, ctx, redraw, "Your seat is out for good: your turns are skipped and your hand stays face down.")
  ].filter(Boolean)));
}

export default {
  kind: "free-parking",
  title: "Free Parking (card game)",
  bots: ["greedy", "expert", "random"],
  seats: { min: 2, max: 6, default: 2 },
  options: () => ({ mode: "standard" }),
  render,
  label,
};
