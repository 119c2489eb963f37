// How a game's seed is made (docs/rng.md), in words a newcomer understands: shown in the lobby's row of a game and on
// its table, before anyone joins, so nobody takes a seat at a deal someone chose without being told (issue 29).
// Read from `seeding` and `seed_chosen_by`, which GET /games and GET /games/{id} both give.
import { h } from "./tables/common.js";

const WHO = { admin: "the admin", creator: "whoever created this game" };

/** {kind, title, detail, short} of a game (a listing's summary or a view): `kind` is `fair`, `fixed` or `older`. */
export function seedingWords(game) {
  if (game.seeding === "combined") {
    return { kind: "fair", title: "Fair deal", detail: "drawn from the server's committed seed and every player's own seed",
             short: "drawn with every player's own seed" };
  }
  // a tournament's table (docs/tournaments.md, "Seeds"): dealt from the tournament's seed, which nobody chose — until
  // these two had words of their own they read as an "older deal", drawn by the server alone, which they are not
  if (game.seeding === "tournament") {
    return { kind: "fair", title: "Tournament deal", detail: "drawn from the tournament's seed: its committed seed and every entrant's own",
             short: "drawn with every entrant's own seed" };
  }
  if (game.seeding === "duplicate") {
    return { kind: "fair", title: "Duplicate deal", detail: "every table of this round is dealt these same cards, from the tournament's seed "
             + "(its committed seed and every entrant's own)", short: "the same cards at every table of the round" };
  }
  if (game.seeding === "fixed") {
    const who = WHO[game.seed_chosen_by] || "someone";
    return { kind: "fixed", title: "Fixed deal", detail: `${who} chose this seed — your seed will change nothing`,
             short: `${who} chose it — your seed changes nothing` };
  }
  return { kind: "older", title: "Older deal", detail: "drawn from the server's committed seed alone, before players brought seeds of their own",
           short: "drawn by the server alone" };
}

/** The whole line, for the table: `Fixed deal: the admin chose this seed — …`. */
export function seedingLine(game) {
  const w = seedingWords(game);
  const el = h("p#seeding", { dataset: { seeding: game.seeding || "legacy" } }, h("b", {}, w.title), `: ${w.detail}`);
  el.classList.add("seeding", w.kind);
  return el;
}

/** The short form, for a row of the lobby (the whole line in its tooltip). */
export function seedingTag(game) {
  const w = seedingWords(game);
  const el = h("span", { title: `${w.title}: ${w.detail}`, dataset: { seeding: game.seeding || "legacy" } }, h("b", {}, w.title), ` · ${w.short}`);
  el.classList.add("deal", w.kind);
  return el;
}

/** Whether a person still wants to join from the lobby, whose row says it in short: asked only where the deal was
 *  chosen (a fair deal asks nothing). The table says it in full right above its "Take a seat", so asks nothing. */
export function confirmJoin(game) {
  const w = seedingWords(game);
  return w.kind !== "fixed" || confirm(`${w.title}: ${w.detail}.\n\nJoin anyway?`);
}
