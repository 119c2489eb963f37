// One table module per game kind. A further kind adds its module here and nothing else changes:
// each module exports {kind, title, bots, seats: {min, max, default}, options?(), optionFields?(), readOptions?(form elements), render(root, view, ctx)}.
import freeParking from "./free-parking.js";
import solitaire from "./solitaire.js";
import monopoly from "./monopoly.js";
import generic from "./generic.js";

export const TABLES = new Map([freeParking, solitaire, monopoly].map((t) => [t.kind, t]));

export function tableFor(kind) {
  return TABLES.get(kind) || generic;
}
