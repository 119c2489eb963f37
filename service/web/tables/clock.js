// Deadlines as the tables show them: counting down while the game is played, the time they were due in a replay.
// app.js ticks every [data-deadline] each second with `tick`, so a countdown reads the same drawn or ticked; the
// "clock" format ("1:42 left") is for a longer wait.
import { h, clockText } from "./common.js";

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
