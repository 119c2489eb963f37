// Monopoly's words and constants: the groups' colours, building costs, seat colours, icons; the names of seats,
// squares, lots and jail cards, the income tax's worth, and the label of every command (monopoly.js draws the table).
import { humanize } from "./common.js";

export const GROUP_COLOURS = {
  brown: "#8b4a2b", light_blue: "#aae0fa", pink: "#d93a96", orange: "#f7941d", red: "#ed1b24",
  yellow: "#fef200", green: "#1fb25a", dark_blue: "#0072bb",
};
export const HOUSE_COST = { brown: 50, light_blue: 50, pink: 100, orange: 100, red: 150, yellow: 150, green: 200, dark_blue: 200 };
export const SEAT_COLOURS = ["#e74c3c", "#2d8cf0", "#27ae60", "#f39c12", "#8e44ad", "#16a085", "#d35400", "#34495e"];
export const JAIL = 10;
export const HOTEL = 5;
export const ICONS = { go: "←", chance: "?", community_chest: "♥", income_tax: "$", luxury_tax: "◆", jail: "",
                free_parking: "P", go_to_jail: "⚠", railroad: "▥", utility: "⚡" };
export const PIPS = ["", "⚀", "⚁", "⚂", "⚃", "⚄", "⚅"];

// ---------------------------------------------------------------- names and labels

export const money = (n) => `$${Number(n).toLocaleString("en-US")}`;

export function seatName(view, seat) {
  if (seat == null) return "the bank";
  const p = (view.seats || [])[seat];
  const name = (p && p.name) || (p && p.bot ? `${p.bot} bot` : `Seat ${seat}`);
  return seat === view.seat ? `${name} (you)` : name;
}

// Where the board's long words may break, with a hyphen shown (a soft hyphen, U+00AD): a square is a few letters
// wide, and a word broken anywhere read "Connectic ut"
const BREAKS = ["Medi-ter-ranean", "Con-necti-cut", "Penn-syl-vania", "Com-mu-nity", "Ken-tucky", "Ten-nes-see", "Caro-lina",
                "Illi-nois", "Vir-ginia", "Elec-tric", "Com-pany", "Board-walk", "At-lan-tic", "Ori-en-tal", "Ver-mont",
                "Ind-iana", "Pa-cific", "Gar-dens", "Park-ing", "Vent-nor"];
const SOFT = new Map(BREAKS.map((w) => [w.replace(/-/g, ""), w.replace(/-/g, "\u00ad")]));

/** A name that fits a square of the board (the full name is its title): short forms, and soft hyphens in long words. */
export function shortName(name) {
  return name.replace(/ Avenue$/, " Ave.").replace(/ Railroad$/, " R.R.").replace(/^Jail \/ Just Visiting$/, "Jail")
    .replace(/[A-Za-z]+/g, (w) => SOFT.get(w) || w);
}

export function squareName(view, q) {
  const sq = (view.board || [])[q];
  return sq ? sq.name : `square ${q}`;
}

export function lotName(view, lot) {
  return typeof lot === "number" ? squareName(view, lot) : `a ${lot}`;
}

export function whereIs(view, p) {
  if (p.position === JAIL) return p.in_jail ? "in jail" : "just visiting";
  return `on ${squareName(view, p.position)}`;
}

export function jailCardName(id) {
  return `Get Out of Jail Free (${id.startsWith("CH") ? "Chance" : "Community Chest"})`;
}

export function holdingsText(view, side) {
  const parts = [];
  if (side && side.cash) parts.push(money(side.cash));
  for (const q of (side && side.squares) || []) parts.push(squareName(view, q));
  for (const c of (side && side.jail_cards) || []) parts.push(jailCardName(c));
  return parts.length ? parts.join(", ") : "nothing";
}

/** Income Tax's worth: cash + printed price of every property + buildings at cost. */
export function taxWorth(view, seat) {
  let worth = view.seats[seat].cash;
  for (const sq of view.board) {
    if (sq.owner !== seat) continue;
    worth += sq.price + (HOUSE_COST[sq.group] || 0) * sq.level;
  }
  return worth;
}

/** "Bob's " for the answers to Bob's trade offer: two offers to one player, each answered by name. */
function offerer(view, c) {
  const t = (view.trades || []).find((x) => x.trade === c.trade);
  return t ? `${seatName(view, t.seat).replace(/ \(you\)$/, "")}'s ` : "the ";
}

export function label(view, c) {
  const me = view.seat != null ? view.seats[view.seat] : null;
  switch (c.type) {
    case "roll": return me && me.in_jail ? "Roll for doubles" : "Roll the dice";
    case "pay_fine": return "Pay the $50 fine";
    case "use_jail_card": return "Use a Get Out of Jail Free card";
    case "buy": return view.offer && view.offer.square != null
      ? `Buy ${squareName(view, view.offer.square)} for ${money(view.offer.price)}` : "Buy";
    case "decline": return "Decline (the bank auctions it)";
    case "choose_tax":
      if (c.choice === "flat") return "Pay $200";
      if (c.choice === "percent" && view.seat != null) {
        const w = taxWorth(view, view.seat);
        return `Pay 10% of your worth (${money(Math.floor(w / 10))} of ${money(w)})`;
      }
      return "Pay 10% of your worth";
    case "bid": return c.amount != null ? `Bid ${money(c.amount)}` : "Bid";
    case "pass_bid": return "Pass";
    case "build": return c.sites ? `Build on ${c.sites.map((q) => squareName(view, q)).join(", ")}` : "Build";
    case "claim_buildings": return !c.sites ? "Claim buildings"
      : c.sites.length ? `Claim for ${c.sites.map((q) => squareName(view, q)).join(", ")}` : "Claim nothing";
    case "sell_building": return c.square != null ? `Sell a building on ${squareName(view, c.square)}` : "Sell a building";
    case "mortgage": return c.square != null ? `Mortgage ${squareName(view, c.square)}` : "Mortgage";
    case "lift_mortgage": return c.square != null ? `Lift the mortgage on ${squareName(view, c.square)}` : "Lift a mortgage";
    case "offer_trade": return c.to != null ? `Offer a trade to ${seatName(view, c.to)}` : "Offer a trade";
    case "accept_trade": return `Accept ${offerer(view, c)}offer`;
    case "reject_trade": return `Reject ${offerer(view, c)}offer`;
    case "withdraw_trade": return "Withdraw your offer";
    case "declare_bankruptcy": return "Declare bankruptcy";
    default: return humanize(c.type);
  }
}
