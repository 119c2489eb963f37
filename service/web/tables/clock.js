// Deadlines, and the turn clock (option turn_seconds: docs/rules-free-parking.md and docs/rules-monopoly.md, "The
// turn clock") as the card game's and Monopoly's tables show it: the countdown of the turn in play, each seat's
// missed turns or its forfeit, and a warning to a player whose next missed turn would forfeit them.
// app.js ticks every [data-deadline] each second with `tick`, so a countdown reads the same drawn or ticked.
import { h, clockText, count } from "./common.js";

const URGENT_MS = 10_000;

/** A deadline's words at `now`: "(42s left)"; in the turn clock's format ("clock"), "1:42 left", then "time is up". */
export function deadlineText(at, format, now = Date.now()) {
  const ms = Math.max(0, Number(at) - now);
  if (format === "clock") return ms > 0 ? `${clockText(ms + 999)} left` : "time is up";
  return `(${Math.round(ms / 1000)}s left)`;
}

/** Bring a [data-deadline] element up to `now` (app.js, every tick): its words, and the turn clock's last seconds. */
export function tick(el, now = Date.now()) {
  el.textContent = deadlineText(el.dataset.deadline, el.dataset.format, now);
  if (el.dataset.format === "clock") el.classList.toggle("urgent", Number(el.dataset.deadline) - now <= URGENT_MS);
}

/** A wait's deadline, counting down; in a replay (ctx.readonly), the time it was due, as nothing ticks there. */
export function deadline(at, ctx, format) {
  if (ctx.readonly) return h("span.deadline.muted", {}, `(due ${new Date(at).toLocaleTimeString()})`);
  const el = h("span.deadline", { dataset: format ? { deadline: at, format } : { deadline: at } });
  tick(el);
  return el;
}


/** The turn in play and its time left, when the game has a turn clock and the server may play the turn at its end
 *  (the view's turn_deadline_at: none while an answer is awaited, which has its own deadline). */
export function turnClockEl(view, ctx, turnSeat, name) {
  if (view.status !== "playing" || view.turn_deadline_at == null) return null;
  const after = view.forfeit_after;
  return h("span.turn-clock", {
    dataset: { turnClock: turnSeat },
    title: `The turn clock: when it runs out the server plays ${name}'s turn for them, a missed turn`
      + (after ? `; ${count(after, "missed turn")} in a row forfeit.` : "."),
  }, h("span.clock-icon", { "aria-hidden": "true" }, "◷"), " ", turnSeat === view.seat ? "Your turn: " : `${name}'s turn: `,
  deadline(view.turn_deadline_at, ctx, "clock"));
}

/** A seat's standing on the turn clock: forfeited, or its missed turns in a row (none: nothing shown). */
export function seatClockEl(view, p) {
  if (p.forfeited) {
    return h("div.seat-clock.forfeited", { dataset: { forfeited: "1" } },
      h("span.tag.forfeited-tag", {}, "forfeited"), ` after ${count(p.missed, "missed turn")}: out of the game`);
  }
  if (!p.missed) return null;
  const of = view.forfeit_after ? ` of ${view.forfeit_after}` : "";
  return h("div.seat-clock.missed", { dataset: { missed: p.missed }, title: "turns in a row the turn clock ran out on" },
    `${p.missed}${of} missed turn${p.missed === 1 && !of ? "" : "s"}`);
}

/** To the viewer alone: their next missed turn would forfeit them. `words.out`: what forfeiting does at this game;
 *  `words.reset`: how the count starts again. */
export function forfeitWarningEl(view, ctx, me, words) {
  const after = view.forfeit_after;
  if (ctx.readonly || view.status !== "playing" || !me || me.forfeited || me.bankrupt || !after || me.missed + 1 < after) return null;
  const mine = view.turn_deadline_at != null && (view.turn_seat ?? view.turn) === view.seat;
  return h("section.prompt.forfeit-warning#forfeit-warning", { role: "alert", dataset: { missed: me.missed } },
    h("h3", {}, "One more missed turn and you forfeit"),
    h("p", {}, me.missed
      ? `The turn clock has run out on ${count(me.missed, "turn")} of yours in a row. If it runs out on your next turn too, `
      : "At this table one missed turn forfeits: if the turn clock runs out on your turn, ",
    `you forfeit: ${words.out}. ${words.reset}`,
    mine ? [" Your turn now: ", deadline(view.turn_deadline_at, ctx, "clock"), "."] : null));
}
