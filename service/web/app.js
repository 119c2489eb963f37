// The single page: a lobby, a table per game (its kind's module from tables/), and a replay viewer.
// Hash routes: #/ (lobby), #/games/{id} (play with this browser's token), #/games/{id}/watch (spectate),
// #/replay/{id} (a finished game, event by event), #/tournaments/{id} (tournament.js). Only the public HTTP API, through api.js.
import * as api from "./api.js";
import { verifyExport } from "./evidence.js";
import { evidencePanel } from "./keeping.js";
import { h, botTag, focusKeys, restoreFocus, clockText, count } from "./tables/common.js";
import { TABLES, tableFor } from "./tables/index.js";
import { tick } from "./tables/clock.js";
import { statsList } from "./tables/solitaire.js";
import { replayPage } from "./replay.js";
import { ratingLine, showRatingChanges } from "./ratings.js";
import { confirmJoin, seedingLine, seedingTag } from "./seeding.js";
import { stillLegal } from "./signing.js";
import { POLL_MAX_MS, every, offlineBanner } from "./reach.js";
import { ACTIONS, yourTurn, yourTurnBadge } from "./yourturn.js";
import { playNow } from "./queue.js";
import { tournamentPage } from "./tournament.js";

const POLL_MS = 500;
const CLOCKED_KINDS = new Set(["free-parking", "monopoly"]);   // the kinds whose config has turn_seconds
const DEFAULT_TURN_SECONDS = 120;   // the create form's turn clock: a card game's turn or a roll take far less
const main = document.getElementById("main");
let stopPage = () => {};

function flash(message, kind = "error") {
  const el = document.getElementById("flash");
  el.textContent = message;
  el.className = `flash ${kind}`;
  el.hidden = !message;
  clearTimeout(flash.timer);
  if (message) flash.timer = setTimeout(() => { el.hidden = true; }, 5000);
}

const TITLE = "Free Parking";

function showWho() {
  const p = api.player();
  const who = document.getElementById("who");
  who.replaceChildren(p
    ? h("span", {}, "Signed in as ", h("b#who-name", {}, p.name), " ",
        h("button.link#sign-out", { type: "button", onclick: () => signOutBox(p) }, "sign out"))
    : h("span.muted", {}, "Not signed in"));
  if ((p && p.token) === showWho.token) return;   // the "your turn" badge follows the signed-in player's stream
  if (showWho.stop) showWho.stop();
  showWho.token = p && p.token;
  showWho.stop = p ? yourTurnBadge(p, document.querySelector("header.top"), api) : null;
}

/** Signing out forgets the token: say so, and show the key that signs back in, before doing it. */
function signOutBox(p) {
  const box = document.getElementById("account");
  const key = h("input#saved-key", { type: "text", readonly: true, value: api.savedKey(p), size: 40, "aria-label": "your sign-in key",
                                      onfocus: (e) => e.target.select() });
  const close = () => { box.hidden = true; box.replaceChildren(); document.getElementById("sign-out")?.focus(); };
  box.replaceChildren(
    h("p", {}, h("b", {}, "Signing out forgets your token in this browser."),
      " Without it nobody can sign in as ", h("b", {}, p.name), " again: save this key first (copy it somewhere safe), ",
      "then sign back in from the lobby with ", h("i", {}, "Sign in with a saved key"), "."),
    h("p.keyline", {}, key,
      h("button#copy-key", { type: "button", onclick: async (e) => {
        try { await navigator.clipboard.writeText(key.value); e.target.textContent = "Copied"; }
        catch { key.focus(); key.select(); e.target.textContent = "Select and copy it"; }
      } }, "Copy")),
    h("p", {},
      h("button#confirm-sign-out", { type: "button", onclick: () => { api.setPlayer(null); close(); showWho(); route(); } }, "Sign out"),
      " ", h("button#cancel-sign-out", { type: "button", onclick: close }, "Stay signed in")));
  box.hidden = false;
  key.focus();
}

/** Create a game, take its seat (and seat the given bots), and open it. */
async function startGame(body, bots = []) {
  const game = await api.post("/games", body);
  await api.join(game.game_id, api.player() ? undefined : "Guest");
  for (const bot of bots) await api.addBot(game.game_id, bot);
  location.hash = `#/games/${game.game_id}`;
}

/** The seed a finished game was dealt from (its export: the revealed server seed, and in a `combined` game the game
 *  seed derived from it and the seats' client seeds, docs/rng.md) — what "play this deal again" creates a game with. */
async function dealSeed(gameId) {
  const text = await api.call("GET", `/games/${gameId}/export`, { text: true });
  const header = JSON.parse(text.split("\n", 1)[0]);
  const checked = await verifyExport(text, { noSignatures: "not needed for the seed" });
  return checked.seeding === "combined" ? checked.gameSeed : header.seed;
}

function notFound(what, id) {
  document.title = TITLE;
  main.replaceChildren(h("section.box#not-found", {},
    h("h2", {}, `No ${what} has the id ${id}`),
    h("p", {}, "It may have been mistyped, or belong to another service."),
    h("p", {}, h("a.button#back-to-lobby", { href: "#/" }, "← Back to the lobby"))));
  main.querySelector("#back-to-lobby").focus();
}

const DATE = new Intl.DateTimeFormat(undefined, { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
const finishedScores = new Map();   // game id → its scores once finished (they no longer change)

// ---------------------------------------------------------------- lobby

function lobby() {
  const p = api.player();
  document.title = TITLE;
  const identity = p
    ? h("section.box#identity", {}, h("h2", {}, "You"), h("p", {}, "Playing as ", h("b", {}, p.name), h("span.muted", {}, ` (${p.player_id})`)),
        h("details#key-box", {}, h("summary", {}, "Your sign-in key"),
          h("p.muted.small", {}, "Keep it somewhere safe: it is the only way to sign in as you in another browser, or after signing out."),
          h("input#my-key", { type: "text", readonly: true, value: api.savedKey(p), "aria-label": "your sign-in key", onfocus: (e) => e.target.select() })),
        h("div#my-rating"), h("div#my-stats"))
    : h("section.box#identity", {}, h("h2", {}, "Register"),
        h("form#register", { onsubmit: async (e) => {
          e.preventDefault();
          const name = e.target.elements.name.value.trim();
          if (!name) return;
          try { await api.register(name); showWho(); route(); } catch (err) { flash(err.message); }
        } },
          h("input", { name: "name", placeholder: "Your name", maxlength: 40, required: true, autocomplete: "nickname" }),
          h("button", { type: "submit" }, "Register")),
        h("p.muted", {}, "Your token is kept in this browser (localStorage)."),
        h("h3", {}, "Sign in with a saved key"),
        h("form#sign-in", { onsubmit: async (e) => {
          e.preventDefault();
          const out = e.target.querySelector("#sign-in-error");
          out.textContent = "";
          try { await api.signIn(e.target.elements.key.value); showWho(); route(); }
          catch (err) { out.textContent = err.message; e.target.elements.key.focus(); }
        } },
          h("input", { name: "key", placeholder: "p_…:fpt_…", required: true, autocomplete: "off", spellcheck: "false", "aria-label": "saved key" }),
          h("button", { type: "submit" }, "Sign in"),
          h("p#sign-in-error.error-text", { role: "alert" })));

  const kindSelect = h("select", { name: "kind" }, [...TABLES.values()].map((t) => h("option", { value: t.kind }, t.title)));
  const seatsInput = h("input", { name: "seats", type: "number", value: 2, min: 1, max: 8 });
  const modeSelect = h("select", { name: "mode" }, h("option", { value: "standard" }, "standard"), h("option", { value: "tournament" }, "tournament"));
  const sit = h("input", { name: "sit", type: "checkbox", checked: true });
  // A turn clock by default (docs/limits.md, "Turn clocks at the lobby's tables"): a person who leaves a table the page
  // made cannot hold the others up for more than a turn or two. The API's own default stays none; emptied: no clock.
  const turnInput = h("input", { name: "turn_seconds", type: "number", min: 1, max: 86400, value: DEFAULT_TURN_SECONDS,
                                 placeholder: "none", size: 5 });
  const kindOptions = h("span#kind-options");   // a kind's own option inputs (a table's optionFields())
  const fitKind = () => {
    const t = tableFor(kindSelect.value);
    seatsInput.min = t.seats.min; seatsInput.max = t.seats.max; seatsInput.value = t.seats.default;
    seatsInput.disabled = t.seats.min === t.seats.max;
    modeSelect.closest("label").hidden = kindSelect.value !== "free-parking";
    turnInput.closest("label").hidden = !CLOCKED_KINDS.has(kindSelect.value);
    kindOptions.replaceChildren(...(t.optionFields ? t.optionFields() : []));
  };
  kindSelect.addEventListener("change", fitKind);
  const create = h("section.box#create", {}, h("h2", {}, "New game"),
    h("form#create-form", { onsubmit: async (e) => {
      e.preventDefault();
      const kind = kindSelect.value;
      const body = { kind, seats: Number(seatsInput.value) };
      if (kind === "free-parking") body.options = { mode: modeSelect.value };
      const t = tableFor(kind);
      if (t.readOptions) body.options = t.readOptions(e.target.elements);
      if (CLOCKED_KINDS.has(kind) && turnInput.value) body.options = { ...body.options, turn_seconds: Number(turnInput.value) };
      try {
        if (sit.checked) await startGame(body);
        else location.hash = `#/games/${(await api.post("/games", body)).game_id}`;
      } catch (err) { flash(err.message); }
    } },
      h("label", {}, "Game ", kindSelect), h("label", {}, "Seats ", seatsInput), h("label", {}, "Mode ", modeSelect),
      kindOptions, h("label", { title: "a turn not played in time is played by the server; empty: no clock" },
        "Turn clock ", turnInput, " s"), h("label", {}, sit, " take a seat"), h("button", { type: "submit" }, "Create")));

  const lists = h("section.box#games", {}, h("h2", {}, "Games"));
  const tables = { waiting: h("div", { dataset: { status: "waiting" } }), playing: h("div", { dataset: { status: "playing" } }),
                   finished: h("div", { dataset: { status: "finished" } }) };
  lists.append(h("h3", {}, "Open — join a seat"), tables.waiting, h("h3", {}, "Playing — watch"), tables.playing,
               h("h3", {}, "Finished — replay"), tables.finished);
  const queue = playNow(flash);   // "Play now" per kind (queue.js, docs/queue.md)
  main.replaceChildren(h("div.lobby", {}, identity, queue.box, create, lists));
  fitKind();

  const who = (seat) => (seat && seat.player ? seat.player.name : "—");
  const finishedCells = (g) => {
    const sc = finishedScores.get(g.game_id);
    if (!sc) return [h("td.muted", { colspan: 3 }, "…")];
    const names = (sc.seats || []).map(who);
    const winner = sc.solitaire ? (sc.solitaire.result === "won" ? `${names[0]} won` : `${names[0]} lost`)
      : sc.winner != null ? `${names[sc.winner] || "seat " + sc.winner} won` : "no winner";
    return [h("td.winner", { dataset: { label: "Result" } }, winner),
            h("td.players", { dataset: { label: "Players" } }, names.join(", ")),
            h("td.date", { dataset: { label: "Ended" } }, h("time", { datetime: new Date(sc.finished_at || g.created_at).toISOString() },
              DATE.format(new Date(sc.finished_at || g.created_at))))];
  };
  // who sat down (GET /games `players`), with the game's id under it for whoever is told one
  const seated = (g) => (!g.players ? "" : g.players.length
    ? g.players.map((p) => (p.bot || p.account === "bot" ? `${p.name} (bot)` : p.name)).join(", ") : "Nobody yet");
  const row = (g, status) => h("tr", { dataset: { game: g.game_id } },
    h("td.id", {}, h("a", { href: `#/games/${g.game_id}${status === "waiting" ? "" : "/watch"}` },
      status !== "finished" && seated(g) ? h("span.at-table", {}, seated(g)) : g.game_id),
      status !== "finished" && seated(g) ? h("span.game-id.muted.small", {}, g.game_id) : null),
    h("td", {}, tableFor(g.kind).title),
    h("td.deal-cell", { dataset: { label: "Deal" } }, seedingTag(g)),
    status === "finished" ? finishedCells(g) : h("td.taken", { title: "seats taken of the table's seats" },
      g.taken < g.seats ? `${count(g.seats - g.taken, "seat")} free of ${g.seats}` : count(g.taken, "player")),
    h("td", {},
      status === "waiting" ? h("button.join", { type: "button", onclick: async () => {
        if (!confirmJoin(g)) return;
        try { await api.join(g.game_id, api.player() ? undefined : prompt("Your name?", "Guest") || "Guest"); location.hash = `#/games/${g.game_id}`; }
        catch (err) { flash(err.message); }
      } }, "Join") : null,
      status === "playing" ? h("a.button", { href: `#/games/${g.game_id}` }, api.tokenFor(g.game_id) ? "Open" : "Watch") : null,
      status === "finished" ? h("a.button", { href: `#/replay/${g.game_id}` }, "Replay") : null));
  if (p) {   // a registered player's ratings (RULES.md §4: μ − 3σ, per kind) and solitaire record
    api.get(`/players/${p.player_id}`).then((me) => {
      const box = main.querySelector("#my-rating");
      const line = ratingLine(me.ratings, (kind) => tableFor(kind).title);
      if (box && line) box.replaceChildren(line);
    }).catch(() => {});
    api.stats(p.player_id).then((st) => {
      const box = main.querySelector("#my-stats");
      const d = st.solitaire && st.solitaire.dealt;
      if (box && d && d.started) box.replaceChildren(statsList(d, "Solitaire"));
    }).catch(() => {});
  }
  const stopLists = every(2000, async () => {
    for (const status of Object.keys(tables)) {
      const { games } = await api.get(`/games?status=${status}&limit=15`);
      if (status === "finished") {
        await Promise.all(games.filter((g) => !finishedScores.has(g.game_id)).map(async (g) => {
          try {
            const { scores } = await api.scores(g.game_id);
            if (scores && scores.status === "finished") finishedScores.set(g.game_id, scores);
          } catch (e) { if (e.offline) throw e; }
        }));
      }
      tables[status].replaceChildren(games.length
        ? h("table.list", {}, h("tbody", {}, games.map((g) => row(g, status))))
        : h("p.muted", {}, "none"));
    }
  }, flash);
  return () => { stopLists(); queue.stop(); };
}

// ---------------------------------------------------------------- a table

function gamePage(gameId, watch) {
  const token = watch ? null : api.tokenFor(gameId);
  const ctx = { state: {}, readonly: false, send: null, api, player: api.player(), startGame, dealSeed, flash };
  const head = h("div.game-head");
  const seatsBox = h("div.seats-box");
  const resultBox = h("div.result-box");
  // the actions come after the board (Monopoly's 40 squares are each focusable): one key press past them
  const skip = h("button.skip-link#skip-to-actions", { type: "button", onclick: () => {
    const target = tableEl.querySelector(ACTIONS);
    if (target) target.focus(); else flash("Nothing to do at the moment.", "info");
  } }, "Skip to your actions");
  const tableEl = h("div.table#table", { dataset: { game: gameId } });
  const evidence = evidencePanel(gameId);   // every receipt this page is shown is kept and checked
  const seeding = h("div.seeding-box");   // how the deal is made, before and after joining
  main.replaceChildren(head, seeding, resultBox, seatsBox, skip, tableEl, evidence.root);
  let shown = null;
  let current = null;
  let useToken = token;

  /** `answered`: `evidence.reading()`'s, taken as the read of the present was sent: the view is held to its own receipt. */
  const show = (view, answered) => {
    current = view;
    answered(view);
    if (view.status === "finished") evidence.finished();
    const key = `${view.version}:${view.seat}:${view.status}`;
    if (key === shown) return;
    shown = key;
    const table = tableFor(view.kind);
    head.replaceChildren(
      h("h2", {}, table.title, " ", h("span.muted.small", {}, view.game_id)),
      h("span.nav", {},
        watch ? h("a", { href: `#/games/${gameId}` }, "play") : h("a", { href: `#/games/${gameId}/watch` }, "spectate"),
        view.status === "finished" ? [" · ", h("a#replay-link", { href: `#/replay/${gameId}` }, "replay")] : null,
        " · ", h("a", { href: `/games/${gameId}/audit`, target: "_blank" }, "audit")));
    seeding.replaceChildren(seedingLine(view));
    seatsBox.replaceChildren(view.status === "waiting" ? seatControls(view, table) : "");
    resultBox.replaceChildren(view.status === "finished" ? resultPanel(view, table) : "");
    tableEl.dataset.kind = view.kind;
    tableEl.dataset.seat = view.seat == null ? "" : view.seat;
    const active = document.activeElement;
    const keys = tableEl.contains(active) && active !== tableEl ? focusKeys(active) : [];
    table.render(tableEl, view, ctx);
    restoreFocus(tableEl, keys);   // focus stays where the action was, not on the page's body
    if (!api.network.up) offlineBanner();   // a table drawn while the service is away has its controls off too
    const mine = yourTurn(view);
    tableEl.dataset.yourTurn = mine ? "1" : "";
    document.title = `${mine ? "● Your turn · " : view.status === "finished" ? "Finished · " : ""}${table.title} · ${TITLE}`;
  };

  function resultPanel(view, table) {
    const seats = view.players || view.seats || [];
    const score = (p) => (p.points != null ? p.points : p.worth != null ? p.worth : null);
    const scoreName = seats.some((p) => p.points != null) ? "points" : seats.some((p) => p.worth != null) ? "worth" : "";
    const ranked = [...seats].sort((a, b) => (b.seat === view.winner) - (a.seat === view.winner) || (score(b) ?? 0) - (score(a) ?? 0));
    const name = (p) => p.name || `Seat ${p.seat + 1}`;
    const winner = seats.find((p) => p.seat === view.winner);
    const headline = view.kind === "solitaire"
      ? (view.result === "won" ? `${view.name || "The player"} won` : `${view.name || "The player"} lost (${(view.reason || "").replace(/_/g, " ")})`)
      : winner ? `${name(winner)} won${winner.seat === view.seat ? " — that is you!" : ""}` : "The game is over: no winner";
    const bots = seats.filter((p) => p.bot && p.seat !== view.seat).map((p) => p.bot);
    const box = h("section.box.result#result", { dataset: { winner: view.winner == null ? "" : view.winner } },
      h("h2", {}, "Game over: ", headline),
      view.kind !== "solitaire" && seats.length ? h("table.list.standings#standings", {},
        h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "Player"), scoreName ? h("th", {}, scoreName) : null,
          h("th", {}, "rating"))),
        h("tbody", {}, ranked.map((p, i) => h("tr", { class: p.seat === view.winner ? "winner" : "", dataset: { seat: p.seat } },
          h("td", {}, i + 1), h("td", {}, name(p), botTag(p), p.seat === view.seat ? h("span.tag", {}, "you") : null),
          scoreName ? h("td", {}, score(p) ?? "") : null, h("td.rating", { dataset: { seat: p.seat } }))))) : null,
      h("p.buttons", {},
        view.kind !== "solitaire" ? h("button#play-again", { type: "button", onclick: () =>
          startGame({ kind: view.kind, seats: seats.length || table.seats.default }, bots).catch((e) => flash(e.message)) },
          bots.length ? `Play again (with the same bots)` : "Play again") : null,
        " ", h("a.button#to-lobby", { href: "#/" }, "Back to the lobby"),
        " ", h("a.button", { href: `#/replay/${gameId}` }, "Replay")));
    if (view.kind !== "solitaire") setTimeout(() => showRatingChanges(api.get, gameId, box), 0);   // once it is on the page
    return box;
  }

  let gone = false;
  const refresh = async () => {
    lastRefresh = Date.now();
    try {
      const answered = evidence.reading();   // heads only move forward: not behind what is held as the read leaves
      show(await api.view(gameId, useToken), answered);
    } catch (e) {
      if (e.status === 401 && useToken) { useToken = null; return refresh(); }  // an old token: look on as a spectator
      if (e.status === 404 && e.code === "not_found") { gone = true; stop(); notFound("game", gameId); return "stop"; }
      throw e;
    }
  };

  // A command is signed for the version it is sent at (signing.js): one refused as stale (409) is read again and, while
  // it is still the player's to make (an interrupt another move raced), signed and sent again at the new version.
  ctx.send = async (command, tries = 3) => {
    try {
      const answered = evidence.reading();
      const answer = await api.send(gameId, command, current.version, useToken);
      evidence.answer(answer);   // the receipt of this command's batch: it may be behind what was streamed since
      show(answer.view, answered);
    } catch (e) {
      if (e.offline) return;   // the banner says so; the poll redraws the table when the service is back
      shown = null;
      await refresh().catch(() => {});
      if (e.status === 409 && tries > 1 && current && stillLegal(current.legal, command)) return ctx.send(command, tries - 1);
      flash(e.status === 409 ? "Someone acted first: the table is refreshed." : e.message, e.status === 409 ? "info" : "error");
    }
  };

  function seatControls(view, table) {
    const botSelect = h("select#bot", {}, table.bots.map((b) => h("option", { value: b }, b)));
    const addBot = async () => { await api.addBot(gameId, botSelect.value); shown = null; await refresh(); };
    return h("section.box.seats", {},
      h("p", {}, "Waiting for players. "),
      view.seat == null && !watch ? h("button#join", { type: "button", onclick: async () => {
        try { await api.join(gameId, api.player() ? undefined : prompt("Your name?", "Guest") || "Guest"); location.reload(); }
        catch (e) { flash(e.message); }
      } }, "Take a seat") : null,
      " ", botSelect,
      h("button#add-bot", { type: "button", onclick: () => addBot().catch((e) => flash(e.message)) }, "Add bot"),
      h("button#fill-bots", { type: "button", onclick: async (e) => {
        // as many bots as the table has free seats, read just now: one more was refused (409, logged by the browser)
        e.currentTarget.disabled = true;
        try {
          const fresh = await api.view(gameId, useToken);
          const free = freeSeats(fresh);
          for (let i = 0; i < free; i++) await api.addBot(gameId, botSelect.value);
        } catch (err) { if (err.status !== 409) flash(err.message); }   // someone sat down meanwhile: the table is full
        shown = null; await refresh();
      } }, "Fill with bots"));
  }

  // Follow GET /games/{id}/events/stream (SSE) where the service has it: each event refreshes the view at once,
  // and the poll slows down to a safety net. Read with fetch rather than EventSource: it sends the token and
  // sees every event type (an EventSource only reports the types it was told to listen for).
  const abort = new AbortController();
  let streaming = false;
  let lastRefresh = 0;
  const follow = async () => {
    try {
      const after = current ? current.version : 0;
      const r = await fetch(`/games/${gameId}/events/stream?after=${after}`,
                            { signal: abort.signal, headers: useToken ? { authorization: `Bearer ${useToken}` } : {} });
      if (r.status !== 200 || !r.body) return;
      streaming = true;
      const reader = r.body.getReader();
      const decoder = new TextDecoder();
      let rest = "";
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const lines = (rest + decoder.decode(value, { stream: true })).split("\n");
        rest = lines.pop();
        const data = lines.filter((l) => l.startsWith("data:"));
        for (const l of data) {
          try { evidence.receive(JSON.parse(l.slice(5)).receipt); } catch { /* not JSON: nothing to keep */ }
        }
        if (data.length) refresh().catch(() => {});
      }
    } catch { /* aborted, or the service has no stream: polling carries on */ }
    finally { streaming = false; }
    if (!abort.signal.aborted && !gone && !(current && current.status === "finished")) setTimeout(follow, api.network.up ? 3000 : POLL_MAX_MS);
  };
  api.network.addEventListener("up", () => { shown = null; }, { signal: abort.signal });   // redraw: controls back on
  const stopPoll = every(POLL_MS, async () => {
    if (streaming && Date.now() - lastRefresh < 3000 && api.network.up) return;
    return refresh();
  }, flash);
  setTimeout(follow, 0);
  const clock = setInterval(() => {
    for (const el of document.querySelectorAll("[data-deadline]")) tick(el);
    for (const el of document.querySelectorAll("[data-clock-from]")) el.textContent = clockText(Date.now() - Number(el.dataset.clockFrom));
  }, 250);
  function stop() { stopPoll(); clearInterval(clock); abort.abort(); evidence.stop(); }
  return stop;
}

/** A waiting table's seats nobody has taken: a view lists every seat, an empty one with no name. */
function freeSeats(view) {
  const seats = view.players || view.seats;
  if (!seats) return view.player_id ? 0 : 1;   // a solitaire's one seat is the view itself
  return seats.filter((p) => !p.name && !p.player_id).length;
}

// ---------------------------------------------------------------- routing

function route() {
  stopPage();
  flash("");
  document.getElementById("notices")?.replaceChildren();   // a table's notices are that table's: not the next page's
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  if (parts[0] === "games" && parts[1]) stopPage = gamePage(parts[1], parts[2] === "watch");
  else if (parts[0] === "replay" && parts[1]) stopPage = replayPage(main, parts[1], { flash, notFound });
  else if (parts[0] === "tournaments" && parts[1]) stopPage = tournamentPage(main, parts[1], { flash, notFound, title: TITLE });
  else stopPage = lobby();
  showWho();
}

window.addEventListener("hashchange", route);
route();
