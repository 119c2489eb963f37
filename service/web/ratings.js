// Ratings on the page (RULES.md §4, docs/ratings.md): a registered player's rating per kind in the lobby, and in the
// game-over box each rated seat's rating before and after the game ("12.4 → 13.1"). Read from GET /players/{id}
// (`ratings`) and GET /games/{id}/ratings; the rating is μ − 3σ, shown to one decimal.
import { h } from "./tables/common.js";

/** The lobby's line: "Rating: Free Parking 12.4 (3 rated games) · …"; null before any rated game. */
export function ratingLine(ratings, titleOf) {
  const kinds = Object.entries(ratings || {});
  if (!kinds.length) return null;
  return h("p", {}, "Rating: ", kinds.map(([kind, r], i) =>
    h("span.rating", { dataset: { kind } }, i ? " · " : "", `${titleOf(kind)} `, h("b", {}, r.rating.toFixed(1)),
      h("span.muted", {}, ` (${r.games} rated game${r.games === 1 ? "" : "s"})`))));
}

/** Fill the box's `td.rating[data-seat]` cells once the read model has reached the game's end: asked again every
 *  second a few times while it has not (a game that is not rated stays blank). */
export async function showRatingChanges(get, gameId, box, tries = 10) {
  if (!box.isConnected) return;
  const answer = await get(`/games/${gameId}/ratings`).catch(() => null);
  if (!answer || !answer.rated) {
    if (tries > 1) setTimeout(() => showRatingChanges(get, gameId, box, tries - 1), 1000);
    return;
  }
  for (const c of answer.changes) {
    const cell = box.querySelector(`td.rating[data-seat="${c.seat}"]`);
    if (cell) cell.textContent = `${c.before.toFixed(1)} → ${c.after.toFixed(1)}`;
  }
  box.dataset.ratings = "shown";
}
