// A tournament (#/tournaments/<id>, docs/tournaments.md). Over rounds: its facts and seed commitment; while open to
// entry its entrants and, for a registered player, an Enter button; each round drawn with its tables (a link to each,
// and the round's printable sheet); the standings; once over, the bundle. A tournament of the older format (one round
// of tables) shows its tables. Read from GET /tournaments/{id} and …/standings by reach.js's poller while it is not
// over: it backs off while the service is away, and stops once the tournament has finished or the view is left.
import * as api from "./api.js";
import { h, count } from "./tables/common.js";
import { tableFor } from "./tables/index.js";
import { every, offlineBanner } from "./reach.js";
import { entrySeedFor } from "./storage.js";

const POLL_MS = 3000;   // a round lasts minutes: a few seconds late is soon enough, and spares the service
const STATUS = { entry: "Open for entry", playing: "Playing", finished: "Finished", waiting: "Waiting for players" };
const BADGE = { playing: "turn", finished: "done" };   // the table's badge colours (style.css)

const short = (hex) => `${hex.slice(0, 12)}…`;
const num = (x) => (Number.isInteger(x) ? String(x) : x.toFixed(1));   // shared places give halves: 1.5
const ordinal = (n) => `${n}${(n % 100 >= 11 && n % 100 <= 13) ? "th" : ["th", "st", "nd", "rd"][n % 10] || "th"}`;
const badge = (status) => h(`span.badge${BADGE[status] ? `.${BADGE[status]}` : ""}`, { dataset: { status } }, STATUS[status] || status);

/** Standings wider than their box (a phone shows a round or two beside the names) say so, and which rounds are in
 *  sight; the box's edges shade on the side there is more — the solitaire grid's cue (style.css, `.grid-scroll`). */
function paintCue(scroller) {
  const cue = scroller.parentElement && scroller.parentElement.querySelector(".scroll-cue");
  if (!cue) return;
  const left = scroller.scrollLeft > 1, right = scroller.scrollLeft + scroller.clientWidth < scroller.scrollWidth - 1;
  scroller.classList.toggle("more-left", left);
  scroller.classList.toggle("more-right", right);
  cue.hidden = !left && !right;
  if (cue.hidden) return;
  const box = scroller.getBoundingClientRect();
  const heads = [...scroller.querySelectorAll("th[data-round]")];
  const seen = heads.filter((th) => { const r = th.getBoundingClientRect(); return r.left >= box.left - 1 && r.right <= box.right + 1; })
    .map((th) => Number(th.dataset.round));
  const where = seen.length ? `rounds ${seen[0]}–${seen[seen.length - 1]} of ${heads.length} in sight`
    : heads.length === 1 ? "the round is out of sight" : `all ${heads.length} rounds are out of sight`;
  cue.textContent = `${where}: swipe the standings ${right && left ? "either way" : right ? "left for the rest →" : "right for the rest ←"}`;
}

/** Draw the view into `main`; returns the function that stops it (a route change). */
export function tournamentPage(main, tournamentId, { flash, notFound, title }) {
  const path = `/tournaments/${encodeURIComponent(tournamentId)}`;
  const slots = Object.fromEntries(["head", "entry", "standings", "rounds", "files"].map((k) => [k, h(`div.t-${k}`)]));
  const root = h("div.tournament#tournament", { dataset: { tournament: tournamentId } }, Object.values(slots));
  main.replaceChildren(root);
  const drawn = new Map();   // slot → the JSON it was last drawn from: a poll that changed nothing redraws nothing
  let asked = 0;
  let alive = true;

  /** Redraw `slot` from `data` when it differs from what is shown: focus and the standings' scroll stay put. */
  const put = (slot, data, build) => {
    const key = JSON.stringify(data);
    if (drawn.get(slot) === key) return;
    drawn.set(slot, key);
    const scroller = slots[slot].querySelector(".t-scroll");
    const left = scroller ? scroller.scrollLeft : 0;
    slots[slot].replaceChildren(...[build()].flat().filter(Boolean));
    const again = slots[slot].querySelector(".t-scroll");
    if (again) again.scrollLeft = left;
  };

  const refresh = async () => {
    const mine = ++asked;
    let t;
    try { t = await api.get(path); }
    catch (e) {
      if (e.status === 404 && e.code === "not_found") {
        if (alive) notFound("tournament", tournamentId);   // not over the page that replaced this view meanwhile
        alive = false;
        return "stop";
      }
      throw e;
    }
    const standings = t.format === "rounds" && t.status !== "entry" ? await api.get(`${path}/standings`) : null;
    if (!alive || mine !== asked) return undefined;   // left, or overtaken by a later read (an entry just sent)
    document.title = `${t.name} · Tournament · ${title}`;
    root.dataset.status = t.status;
    root.dataset.format = t.format;
    if (t.format === "rounds") drawRounds(t, standings); else drawTables(t);
    if (!api.network.up) offlineBanner();   // drawn while the service is away: its controls off too
    const over = t.status === "finished" && (!standings || standings.status === "finished");
    return over ? "stop" : undefined;
  };

  function drawRounds(t, standings) {
    const me = api.player();
    const myId = me ? me.player_id : null;
    put("head", { ...t, entrants: null, drawn: t.drawn.length }, () => head(t, [
      ["Rounds", t.status === "entry" ? t.rounds : `${t.drawn.length} of ${t.rounds}`],
      ["Table size", t.table_size],
      ["Deals", t.duplicate ? "duplicate" : "each table its own"],
      ["Entry", t.entry === "open" ? "open" : "named by the organiser"],
    ]));
    put("entry", { s: t.status, e: t.entry, list: t.entrants, myId }, () => entrySection(t, myId));
    put("standings", { standings, myId }, () => (standings ? standingsSection(t, standings, myId) : null));
    requestAnimationFrame(paintAll);   // once laid out: whether the standings are wider than their box
    put("rounds", { drawn: t.drawn, myId }, () => t.drawn.slice().reverse().map((r) => roundSection(r, t, myId)));
    put("files", { s: t.status, f: standings && standings.rounds_finished }, () => filesSection(t, standings));
  }

  function head(t, facts) {
    const kind = tableFor(t.kind).title;
    return h("section.box#t-head", {},
      h("div.game-head", {}, h("h2#t-name", {}, t.name), badge(t.status)),
      h("p.muted#t-kind", {}, `${kind} · `, t.format === "rounds" ? "a tournament over rounds" : "one round of tables",
        h("span.small", {}, ` · ${t.tournament_id}`)),
      h("dl.stats#t-facts", {}, facts.map(([k, v]) => h("div", {}, h("dt", {}, k), h("dd", {}, v))),
        t.seed_commitment ? h("div", {}, h("dt", {}, "Seed commitment"),
          h("dd", {}, h("code#t-commitment", { title: t.seed_commitment }, short(t.seed_commitment)))) : null));
  }

  function entrySection(t, myId) {
    const entered = t.entrants.some((e) => e.player_id === myId);
    const list = t.entrants.length
      ? h("ul#t-entrants.t-entrants", {}, t.entrants.map((e) => h("li", { dataset: { player: e.player_id } },
          e.name, e.player_id === myId ? [" ", h("span.tag", {}, "you")] : null,
          h("span.muted.small", { title: `client seed ${e.client_seed}` },
            e.seed_from === "player" ? " · brought a seed of their own" : " · seed derived by the service"))))
      : h("p.muted#t-entrants", {}, "Nobody has entered yet.");
    if (t.status !== "entry") {   // the draw is made: who went into its seed stays one click away
      return h("details.box#t-entry", {}, h("summary", {}, `Entrants (${t.entrants.length}) and their seeds`), list);
    }
    let action;
    if (t.entry !== "open") action = h("p.muted", {}, "The organiser names this tournament's entrants.");
    else if (entered) action = h("p#t-entered", {}, "You have entered: your tables open here when the organiser starts it.");
    else if (!myId) action = h("p.muted#t-sign-in", {}, h("a", { href: "#/" }, "Register or sign in"), " in the lobby to enter.");
    else action = h("p", {}, h("button#t-enter", { type: "button", onclick: (e) => enter(e.currentTarget) }, "Enter"),
      h("span.muted.small", {}, " with a seed of your own, drawn by this page: it goes into the tournament's."));
    return h("section.box#t-entry", {}, h("h3", {}, `Entrants (${t.entrants.length})`), list, action);
  }

  // The seed is sent alone, not this browser's key (signing.js): the tournament seats the player at tables this page
  // never joined, so it keeps no key record for them and would send their commands unsigned — refused from a keyed seat.
  async function enter(button) {
    const p = api.player();
    button.disabled = true;
    try { await api.post(`${path}/entries`, { client_seed: entrySeedFor(tournamentId) }, p.token); }
    catch (e) { if (!e.offline && e.code !== "already_entered") flash(e.message); }
    finally { button.disabled = false; }
    await refresh().catch((e) => { if (!e.offline) flash(e.message); });
  }

  function standingsSection(t, s, myId) {
    const what = s.duplicate ? "matchpoints" : "points";
    const rounds = Array.from({ length: s.rounds }, (_, i) => i + 1);
    const cell = (line) => {
      if (!line) return h("td.round-cell.muted", {}, "—");
      const got = s.duplicate ? line.matchpoints ?? line.points : line.points;
      return h("td.round-cell", { title: `table ${line.table + 1}, seat ${line.seat + 1}: ${ordinal(line.rank)} place, score ` +
        `${line.score}, ${num(line.points)} points${line.matchpoints != null ? `, ${num(line.matchpoints)} matchpoints` : ""}` },
        h("b", {}, num(got)), h("span.muted.small", {}, ` ${ordinal(line.rank)}`));
    };
    const heads = h("tr", {}, h("th.rank", {}, "#"), h("th.name", {}, "Player"), h("th.num", {}, what), h("th.num", {}, "score"),
      rounds.map((n) => h("th.num", { title: `round ${n}`, dataset: { round: n } }, `R${n}`)));
    const rows = s.standings.map((row) => h("tr", { class: row.player_id === myId ? "mine" : null, dataset: { player: row.player_id } },
      h("td.rank", {}, row.rank), h("td.name", {}, row.name, row.player_id === myId ? [" ", h("span.tag", {}, "you")] : null),
      h("td.num.points", {}, h("b", {}, num(row.points))), h("td.num", {}, row.score),
      rounds.map((n) => cell(row.rounds.find((l) => l.round === n)))));
    return h("section.box#t-standings", {},
      h("h3", {}, s.status === "finished" ? "Final standings" : "Standings"),
      h("p.muted.small", {}, `After ${count(s.rounds_finished, "round")} of ${s.rounds}. `, s.duplicate
        ? "Matchpoints: one for each player dealt your seat at another table whom you beat on score, a half for a tie."
        : "Points: by place at each table (of four: 3, 2, 1, 0; tied places share theirs), then total score."),
      h("div.grid-scroll.t-scroll", { onscroll: (e) => paintCue(e.currentTarget) },
        h("table.list.t-standings#t-standings-table", {}, h("thead", {}, heads), h("tbody", {}, rows))),
      h("p.scroll-cue#t-standings-cue", { hidden: true, "aria-hidden": "true" }));
  }

  function roundSection(r, t, myId) {
    return h("section.box.t-round", { dataset: { round: r.round, status: r.status } },
      h("div.game-head", {}, h("h3", {}, `Round ${r.round} of ${t.rounds}`), badge(r.status)),
      h("p.small", {}, h("a.sheet-link", { href: `${path}/export?format=sheet-html&round=${r.round}`, target: "_blank", rel: "noopener" },
        "Print round sheet")),
      h("div.t-tables", {}, r.tables.map((table) => tableCard(table, myId))));
  }

  function tableCard(table, myId) {
    const mine = table.seats.some((s) => s.player_id && s.player_id === myId);
    const [href, label] = mine && table.status !== "finished" ? [`#/games/${table.game_id}`, "Play"]
      : [`#/games/${table.game_id}/watch`, table.status === "finished" ? "Final table" : "Watch"];
    return h(`div.t-table${mine ? ".mine" : ""}`, { dataset: { game: table.game_id, status: table.status } },
      h("div.t-table-head", {}, h("b", {}, `Table ${table.table + 1}`), badge(table.status)),
      h("ol.t-seats", {}, table.seats.map((s) => h("li", { dataset: { seat: s.seat } }, s.name,
        s.bot ? [" ", h("span.tag", { title: "a server bot, filling a seat no entrant takes" }, "bot")] : null,
        s.player_id && s.player_id === myId ? [" ", h("span.tag", {}, "you")] : null))),
      h("a.button.table-link", { href }, label));
  }

  function filesSection(t, s) {
    if (t.status === "entry") return null;
    return h("section.box#t-files", {}, h("h3", {}, "Results"),
      h("p", {}, h("a#results-link", { href: `${path}/export?format=csv`, download: `${tournamentId}-results.csv` },
        "Each round's results (CSV)"), s ? h("span.muted.small", {}, ` · ${count(s.rounds_finished, "round")} finished so far`) : null),
      t.status === "finished"
        ? h("p", {}, h("a.button#bundle-link", { href: `${path}/export?format=ndjson`, download: `${tournamentId}.ndjson` },
            "Download the bundle"), h("span.muted.small", {}, " every seed, draw and deal: ",
            h("code", {}, `python -m replays verify ${tournamentId}.ndjson`), " checks them"))
        : h("p.muted.small", {}, "The bundle (every seed, draw and deal) is published when the last round has finished."));
  }

  /** A tournament of the older format: one round of tables, created together, each played on its own. */
  function drawTables(t) {
    put("head", t, () => head(t, [["Tables", t.tables.length], ["Created", new Date(t.created_at).toLocaleString()]]));
    put("rounds", t.tables, () => h("section.box.t-round", {}, h("h3", {}, "Tables"),
      h("p.muted#t-older", {}, "This tournament is one round of tables, made before tournaments over rounds: each table ",
        "is played on its own, and its standings and bundle are in the API (GET …/standings, …/export)."),
      h("div.t-tables", {}, t.tables.map((table) => h("div.t-table", { dataset: { game: table.game_id, status: table.status } },
        h("div.t-table-head", {}, h("b", {}, `Table ${table.table + 1}`), badge(table.status)),
        h("p.small", {}, `${table.taken} of ${count(table.seats, "seat")} taken`,
          table.reserved.length ? `, ${table.reserved.length} reserved` : ""),
        h("a.button.table-link", { href: `#/games/${table.game_id}${table.status === "waiting" ? "" : "/watch"}` },
          table.status === "waiting" ? "Open" : "Watch"))))));
  }

  const paintAll = () => root.querySelectorAll(".t-scroll").forEach(paintCue);
  addEventListener("resize", paintAll);
  const stop = every(POLL_MS, refresh, flash);
  return () => { alive = false; stop(); removeEventListener("resize", paintAll); };
}
