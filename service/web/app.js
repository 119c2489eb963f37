// The single page: a lobby, a table per game (its kind's module from tables/), and a replay viewer.
// Hash routes: #/ (lobby), #/games/{id} (play with this browser's token), #/games/{id}/watch (spectate),
// #/replay/{id} (a finished game, event by event). Only the public HTTP API, through api.js.
import * as api from "./api.js";
import { evidencePanel } from "./evidence.js";
import { h } from "./tables/common.js";
import { TABLES, tableFor } from "./tables/index.js";

const POLL_MS = 500;
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

function showWho() {
  const p = api.player();
  const who = document.getElementById("who");
  who.replaceChildren(p
    ? h("span", {}, "Signed in as ", h("b#who-name", {}, p.name), " ",
        h("button.link", { type: "button", onclick: () => { api.setPlayer(null); showWho(); route(); } }, "sign out"))
    : h("span.muted", {}, "Not signed in"));
}

function every(ms, fn) {
  let stopped = false;
  let timer = null;
  const tick = async () => {
    if (stopped) return;
    try { await fn(); } catch (e) { if (!stopped) flash(e.message); }
    if (!stopped) timer = setTimeout(tick, ms);
  };
  tick();
  return () => { stopped = true; clearTimeout(timer); };
}

// ---------------------------------------------------------------- lobby

function lobby() {
  const p = api.player();
  const identity = p
    ? h("section.box#identity", {}, h("h2", {}, "You"), h("p", {}, "Playing as ", h("b", {}, p.name), h("span.muted", {}, ` (${p.player_id})`)))
    : h("section.box#identity", {}, h("h2", {}, "Register"),
        h("form#register", { onsubmit: async (e) => {
          e.preventDefault();
          const name = e.target.elements.name.value.trim();
          if (!name) return;
          try { await api.register(name); showWho(); route(); } catch (err) { flash(err.message); }
        } },
          h("input", { name: "name", placeholder: "Your name", maxlength: 40, required: true, autocomplete: "nickname" }),
          h("button", { type: "submit" }, "Register")),
        h("p.muted", {}, "Your token is kept in this browser (localStorage)."));

  const kindSelect = h("select", { name: "kind" }, [...TABLES.values()].map((t) => h("option", { value: t.kind }, t.title)));
  const seatsInput = h("input", { name: "seats", type: "number", value: 2, min: 1, max: 8 });
  const modeSelect = h("select", { name: "mode" }, h("option", { value: "standard" }, "standard"), h("option", { value: "tournament" }, "tournament"));
  const sit = h("input", { name: "sit", type: "checkbox", checked: true });
  const kindOptions = h("span#kind-options");   // a kind's own option inputs (a table's optionFields())
  const fitKind = () => {
    const t = tableFor(kindSelect.value);
    seatsInput.min = t.seats.min; seatsInput.max = t.seats.max; seatsInput.value = t.seats.default;
    seatsInput.disabled = t.seats.min === t.seats.max;
    modeSelect.closest("label").hidden = kindSelect.value !== "free-parking";
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
      try {
        const game = await api.post("/games", body);
        if (sit.checked) await api.join(game.game_id, api.player() ? undefined : "Guest");
        location.hash = `#/games/${game.game_id}`;
      } catch (err) { flash(err.message); }
    } },
      h("label", {}, "Game ", kindSelect), h("label", {}, "Seats ", seatsInput), h("label", {}, "Mode ", modeSelect),
      kindOptions, h("label", {}, sit, " take a seat"), h("button", { type: "submit" }, "Create")));

  const lists = h("section.box#games", {}, h("h2", {}, "Games"));
  const tables = { waiting: h("div", { dataset: { status: "waiting" } }), playing: h("div", { dataset: { status: "playing" } }),
                   finished: h("div", { dataset: { status: "finished" } }) };
  lists.append(h("h3", {}, "Open — join a seat"), tables.waiting, h("h3", {}, "Playing — watch"), tables.playing,
               h("h3", {}, "Finished — replay"), tables.finished);
  main.replaceChildren(h("div.lobby", {}, identity, create, lists));
  fitKind();

  const row = (g, status) => h("tr", { dataset: { game: g.game_id } },
    h("td", {}, h("a", { href: `#/games/${g.game_id}${status === "waiting" ? "" : "/watch"}` }, g.game_id)),
    h("td", {}, tableFor(g.kind).title), h("td", {}, `${g.taken}/${g.seats}`),
    h("td", {},
      status === "waiting" ? h("button", { type: "button", onclick: async () => {
        try { await api.join(g.game_id, api.player() ? undefined : prompt("Your name?", "Guest") || "Guest"); location.hash = `#/games/${g.game_id}`; }
        catch (err) { flash(err.message); }
      } }, "Join") : null,
      status === "playing" ? h("a.button", { href: `#/games/${g.game_id}` }, api.tokenFor(g.game_id) ? "Open" : "Watch") : null,
      status === "finished" ? h("a.button", { href: `#/replay/${g.game_id}` }, "Replay") : null));
  return every(2000, async () => {
    for (const status of Object.keys(tables)) {
      const { games } = await api.get(`/games?status=${status}&limit=15`);
      tables[status].replaceChildren(games.length
        ? h("table.list", {}, h("tbody", {}, games.map((g) => row(g, status))))
        : h("p.muted", {}, "none"));
    }
  });
}

// ---------------------------------------------------------------- a table

function gamePage(gameId, watch) {
  const token = watch ? null : api.tokenFor(gameId);
  const ctx = { state: {}, readonly: false, send: null };
  const head = h("div.game-head");
  const seatsBox = h("div.seats-box");
  const tableEl = h("div.table#table", { dataset: { game: gameId } });
  const evidence = evidencePanel(gameId);   // every receipt this page is shown is kept and checked
  main.replaceChildren(head, seatsBox, tableEl, evidence.root);
  let shown = null;
  let current = null;
  let useToken = token;

  const show = (view) => {
    current = view;
    evidence.receive(view.receipt);
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
    seatsBox.replaceChildren(view.status === "waiting" ? seatControls(view, table) : "");
    tableEl.dataset.kind = view.kind;
    tableEl.dataset.seat = view.seat == null ? "" : view.seat;
    table.render(tableEl, view, ctx);
  };

  const refresh = async () => {
    lastRefresh = Date.now();
    try {
      show(await api.view(gameId, useToken));
    } catch (e) {
      if (e.status === 401 && useToken) { useToken = null; return refresh(); }  // an old token: look on as a spectator
      throw e;
    }
  };

  ctx.send = async (command) => {
    try {
      const answer = await api.send(gameId, command, current.version, useToken);
      evidence.receive(answer.receipt);   // the receipt of this command's batch (the view's may be of a later version)
      show(answer.view);
    } catch (e) {
      flash(e.status === 409 ? "Someone acted first: the table is refreshed." : e.message, e.status === 409 ? "info" : "error");
      shown = null;
      await refresh();
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
      h("button#fill-bots", { type: "button", onclick: async () => {
        try { for (let i = 0; i < 8; i++) await api.addBot(gameId, botSelect.value); }
        catch (e) { if (e.status !== 409) flash(e.message); }
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
    if (!abort.signal.aborted && !(current && current.status === "finished")) setTimeout(follow, 3000);
  };
  const stopPoll = every(POLL_MS, async () => {
    if (streaming && Date.now() - lastRefresh < 3000) return;
    await refresh();
  });
  setTimeout(follow, 0);
  const clock = setInterval(() => {
    for (const el of document.querySelectorAll("[data-deadline]")) {
      el.textContent = `(${Math.max(0, Math.round((Number(el.dataset.deadline) - Date.now()) / 1000))}s left)`;
    }
  }, 250);
  return () => { stopPoll(); clearInterval(clock); abort.abort(); };
}

// ---------------------------------------------------------------- the replay viewer

function replayPage(gameId) {
  const box = h("div.replay#replay", { dataset: { game: gameId } });
  main.replaceChildren(box);
  let alive = true;
  (async () => {
    const latest = await api.view(gameId);
    if (latest.status !== "finished") {
      box.replaceChildren(h("p", {}, "Replays open once the game is over. ", h("a", { href: `#/games/${gameId}/watch` }, "Watch it")));
      return;
    }
    const table = tableFor(latest.kind);
    let lines = null;   // the audit, for a replay answer without its event's line
    const slider = h("input#seq", { type: "range", min: 0, max: latest.version, step: 1, value: latest.version });
    const seqLabel = h("output#seq-label", {}, "");
    const line = h("pre#audit-line.audit-line", {}, "");
    const tableEl = h("div.table#replay-table", { dataset: { kind: latest.kind } });
    const ctx = { state: {}, readonly: true, send: () => {} };
    let asked = 0;
    const load = async () => {
      const at = Number(slider.value);
      const mine = ++asked;
      const data = await api.replay(gameId, at);
      if (mine !== asked || !alive) return;   // a later move of the slider has overtaken this answer
      let text = data.event && data.event.line;
      if (text === undefined) {
        if (!lines) {
          lines = new Map((await api.audit(gameId)).split("\n").filter(Boolean).map((l) => [Number(l.split(/\s+/)[0]), l]));
        }
        text = lines.get(at);
      }
      seqLabel.textContent = `event ${at} of ${latest.version}`;
      line.textContent = at === 0 ? "(before the first event)" : text || "";
      table.render(tableEl, data.view, ctx);
      tableEl.dataset.at = at;
    };
    const step = (d) => { slider.value = Math.max(0, Math.min(latest.version, Number(slider.value) + d)); load(); };
    slider.addEventListener("input", () => load().catch((e) => flash(e.message)));
    box.replaceChildren(
      h("div.game-head", {}, h("h2", {}, "Replay: ", table.title, " ", h("span.muted.small", {}, gameId)),
        h("span.nav", {}, h("a", { href: `#/games/${gameId}/watch` }, "final table"))),
      h("div.slider", {},
        h("button#prev", { type: "button", onclick: () => step(-1) }, "◀"), slider,
        h("button#next", { type: "button", onclick: () => step(1) }, "▶"), seqLabel),
      h("div.replay-body", {}, tableEl, h("aside.audit", {}, h("h3", {}, "Audit line"), line)));
    await load();
  })().catch((e) => flash(e.message));
  return () => { alive = false; };
}

// ---------------------------------------------------------------- routing

function route() {
  stopPage();
  flash("");
  const parts = location.hash.replace(/^#\/?/, "").split("/").filter(Boolean);
  if (parts[0] === "games" && parts[1]) stopPage = gamePage(parts[1], parts[2] === "watch");
  else if (parts[0] === "replay" && parts[1]) stopPage = replayPage(parts[1]);
  else stopPage = lobby();
  showWho();
}

window.addEventListener("hashchange", route);
route();
