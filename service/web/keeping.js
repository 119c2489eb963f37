// What this browser keeps of a game (docs/fairness.md, "In the player's page"): every receipt it was shown and the
// client seed it brought (storage.js keeps them); and the checks on them as they arrive, before any export exists — two
// receipts of one version that disagree, a view that does not come with its own receipt, and a service whose present
// state goes back behind a receipt it signed.
import * as api from "./api.js";
import { checkSignature, conflicts, importKeys, parseExport, verifyExport } from "./evidence.js";
import { checkMoves, unkeyedBecause } from "./signing.js";
import { every } from "./reach.js";
import { keep, kept, malformed, markVerified, storage } from "./storage.js";
import { h, count } from "./tables/common.js";

export { kept } from "./storage.js";

/**
 * Heads only move forward. A later answer may carry a lower version than a receipt already kept — a command's answer
 * names its own batch, and the bots' moves after it may have been streamed first — so versions are not compared in
 * the order answers arrive. What the service cannot honestly do is answer a read of the present state (a view, or the
 * view of a command's answer) at a version before one it had signed when the read was *sent*: the log only grows, so
 * that answer says it lost or rewrote history it had vouched for. `sent()` notes, as a read leaves, the highest
 * receipt vouched for then; `answered(floor, receipt)` is the [held, answered] pair that proves a step back, or null.
 * That holds the view only if its receipt is its own: every view (and command answer) must come with a receipt of its
 * own game, version and head (`notItsOwn`), or it is flagged in `unbound` — an earlier view with no receipt, another
 * game's, or the newest one the page holds would otherwise be drawn and never held to anything.
 */
export class Forward {
  constructor() {
    this.highest = null;   // the receipt of the highest version vouched for (its signature checked, or uncheckable)
    this.reads = 0;        // answers to reads of the present state held to it
    this.back = [];        // [held, answered]: the service's present went back behind a receipt it signed
    this.unbound = [];     // {version, head, found}: a view or answer whose receipt is not its own (or none)
  }

  vouched(receipt) {
    if (!this.highest || receipt.version > this.highest.version) this.highest = receipt;
  }

  sent() { return this.highest; }

  answered(floor, receipt) {
    if (!floor || receipt.version >= floor.version) return null;
    const pair = [floor, receipt];
    this.back.push(pair);
    return pair;
  }
}

/** Why `receipt` is not the receipt of `own` ({game_id, version, head} of the view or answer it came with), or "". */
export function notItsOwn(own, receipt) {
  if (!receipt) return "no receipt";
  const why = malformed(receipt);
  if (why) return `a malformed receipt (${why})`;
  if (receipt.game_id !== own.game_id) return `a receipt of another game (${receipt.game_id})`;
  if (receipt.version !== own.version || receipt.head !== own.head) {
    return `a receipt of version ${receipt.version} (head ${receipt.head.slice(0, 12)}…)`;
  }
  return "";
}

// ---------------------------------------------------------------- the panel on a game's page

const KEYS_RETRY_MS = 1000;   // a failed read of GET /keys is tried again after this, backing off while the service is away

let keysPromise = null;
/** GET /keys, and the keys imported for Ed25519: {listing, keys} or {listing, keys: null, missing: why}. A read that
 *  fails (no answer, or not the listing) rejects, and the next call reads again. */
function serviceKeys(again = false) {
  if (!keysPromise || again) {
    keysPromise = (async () => {
      const listing = await api.get("/keys");
      try { return { listing, keys: await importKeys(listing) }; }
      catch (e) { return { listing, keys: null, missing: e.message }; }
    })();
    keysPromise.catch(() => { keysPromise = null; });
  }
  return keysPromise;
}

/** A button that saves `data()` as a JSON file named `name` (made when clicked: it is always the latest). */
const saveButton = (id, name, data) => h(`button#${id}`, { type: "button", onclick: async () => {
  const url = URL.createObjectURL(new Blob([JSON.stringify(await data(), null, 1)], { type: "application/json" }));
  const a = h("a", { href: url, download: name });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
} }, name);

/** The command line that checks what this page kept, with the key its seat was taken with (if any). */
function verifyCommand(gameId) {
  const record = kept(gameId);
  const key = record.public_key && record.seat != null ? ` --player-key ${record.seat}:${record.public_key}` : "";
  return ` — then python -m replays verify LOG --receipts receipts-${gameId}.json --key keys.json${key}`;
}

/** What the page says of the bots at its table after the end: re-deriving their moves from their own seats' views is
 *  `replays verify`'s (docs/fairness.md, "Bots that never peek"), named here; bots seated before that say so. */
function botsLine(exportText) {
  if (!exportText) return null;
  const bots = parseExport(exportText).envelopes.filter(({ env }) => env.type === "seat_taken" && env.public.player.bot)
    .map(({ env }) => env.public);
  if (!bots.length) return null;
  const named = bots.map((b) => `seat ${b.seat}: ${b.player.bot}`).join(", ");
  const checkable = bots.every((b) => b.player.bot_version);
  return h("li", { dataset: { check: "bots", result: "python" } }, checkable
    ? `The bots at your table (${named}) never saw your cards: python -m replays verify LOG re-derives each of their moves from its own seat's view, and refuses the log at any that does not come out the same`
    : `The bots at your table (${named}) were seated before bots were checkable: their moves cannot be re-derived from their own seats`);
}

/** The evidence box of a game's page. `receive(receipt)` from every streamed event; `answer(answer)` from a command's
 *  answer (its receipt is of its own `version` and `head`); `reading()` as a read of the present state (a view, or a
 *  command whose answer brings one) is sent: it gives the function the answer's view goes to. `finished()` once the game
 *  is over, to check the export; `stop()` when the page is left. */
export function evidencePanel(gameId) {
  const root = h("section.box.evidence#evidence", { dataset: { state: "keeping" } });
  const status = h("p#evidence-status", {}, "");
  const signatures = h("p#evidence-signatures.small", {}, "");
  const stored = h("p#evidence-storage.small", { hidden: true }, "");
  const verdict = h("p#evidence-verdict", {}, "");
  const list = h("ul#evidence-checks.small");
  const files = h("p#evidence-files.small");
  const commandLine = h("span.muted#evidence-command", {}, "");
  root.append(h("h3", {}, "Evidence you keep"), status, signatures, stored, verdict, list, files);
  const sig = { ok: 0, bad: [], missing: "", failed: "" };   // missing: no Ed25519 (for good); failed: GET /keys did not answer
  const vouched = new Map();   // receipt → its check: "ok", "bad", or "unchecked" (no Ed25519: it came over the page's own connection)
  const unchecked = new Map(); // the receipts vouched for while GET /keys failed: checked again once it answers
  const malformedSeen = [];    // why each receipt the service sent was not one (not kept)
  const forward = new Forward();
  const conflicting = [];
  let ended = false, exportText = null, checking = null, again = false, keysRetry = null;

  const paint = () => {
    const record = kept(gameId);
    status.textContent = `${count(record.receipts.length, "signed receipt")} kept in this browser` +
      (record.client_seed ? `; your client seed for seat ${record.seat}: ${record.client_seed}` : "") +
      (record.seat == null ? "" : record.public_key ? `; your moves are signed by this browser's own key ${record.public_key}`
        : `; you play unkeyed (your moves are the service's word): ${unkeyedBecause || "this seat was taken without a key"}`);
    root.dataset.keyed = record.seat == null ? "" : record.public_key ? "yes" : "no";
    commandLine.textContent = verifyCommand(gameId);
    signatures.textContent = (sig.missing
      ? `The signature check could not run: ${sig.missing}. The receipts are kept; check them with python -m replays verify.`
      : sig.failed ? `The signature check could not run yet: ${sig.failed}; trying again.`
      : sig.bad.length ? `${count(sig.bad.length, "receipt")} ${sig.bad.length === 1 ? "does" : "do"} not check out under the service's key (version ${sig.bad[0]})`
      : `${count(sig.ok, "receipt signature")} checked (Ed25519, GET /keys)`) +
      (malformedSeen.length ? ` ${count(malformedSeen.length, "malformed receipt")} ${malformedSeen.length === 1 ? "was" : "were"} sent and not kept (${malformedSeen[0]}).` : "");
    root.dataset.signatures = sig.missing || sig.failed ? "unavailable" : sig.bad.length ? "bad" : "ok";
    root.dataset.reads = forward.reads;
    root.dataset.malformed = malformedSeen.length;
    const full = storage.full.has(gameId);
    root.dataset.storage = full ? "full" : "kept";
    stored.hidden = !full;
    stored.textContent = full ? "This browser's storage is full: this game's receipts are kept only while this page is open. " +
      "Download them below, or clear the evidence of other games from this browser." : "";
    if (exportText !== null) return;   // the export's verdict says it all, these included
    const cut = (r) => `${r.head.slice(0, 12)}…`;
    if (conflicting.length) {
      const [a, b] = conflicting[0];
      Object.assign(root.dataset, { state: "conflict", conflict: "two-heads", version: a.version });
      verdict.textContent = `Version ${a.version} disagrees: two receipts of it name heads ${cut(a)} and ${cut(b)}`;
    } else if (forward.back.length) {
      const [held, answered] = forward.back[0];
      Object.assign(root.dataset, { state: "conflict", conflict: "backwards", version: held.version });
      verdict.textContent = `Version ${held.version} disagrees: the service signed it (head ${cut(held)}), then answered a later ` +
        `view at version ${answered.version} (head ${cut(answered)}): its history went back`;
    } else if (forward.unbound.length) {
      const { version, head, found } = forward.unbound[0];
      Object.assign(root.dataset, { state: "conflict", conflict: "not-its-receipt", version });
      verdict.textContent = `Version ${version} disagrees: the service showed it (head ${String(head).slice(0, 12)}…) with ${found}, ` +
        "not a receipt of its own: what it showed is vouched for by nothing";
    }
  };
  files.append("Download: ", saveButton("evidence-receipts", `receipts-${gameId}.json`, () => kept(gameId).receipts), " ",
               saveButton("evidence-keys", "keys.json", async () => (await serviceKeys()).listing),
               commandLine);
  storage.addEventListener("change", paint);

  const idOf = (receipt) => [receipt.version, receipt.head, receipt.at, receipt.key_id, receipt.sig].join(":");   // all it signs, and the sig
  /** GET /keys did not answer: say so, and read it again (reach.js's poller, backing off while the service is away);
   *  once it answers, the receipts vouched for meanwhile are checked, and so is the export if the game is over. */
  const keysFailed = (e) => {
    sig.failed = `GET /keys failed (${e.message})`;
    if (keysRetry) return;
    keysRetry = every(KEYS_RETRY_MS, async () => {
      await serviceKeys(true);
      keysRetry = null;
      sig.failed = "";
      const pending = [...unchecked.values()];
      unchecked.clear();
      for (const r of pending) vouched.delete(idOf(r));
      await Promise.all(pending.map(vouch));
      paint();
      if (exportText !== null) check();
      return "stop";
    });
  };

  /** The receipt's signature, checked once: a receipt that does not check out is kept, and counts for nothing live. */
  const vouch = (receipt) => {
    const id = idOf(receipt);
    if (!vouched.has(id)) vouched.set(id, (async () => {
      let result = "unchecked";
      try {
        let known = await serviceKeys();
        if (known.keys && !known.keys.has(receipt.key_id)) known = await serviceKeys(true);   // a key rotated meanwhile
        if (!known.keys) sig.missing = known.missing;
        else {
          result = (await checkSignature(receipt, known.keys)) === "ok" ? "ok" : "bad";
          if (result === "ok") sig.ok++; else sig.bad.push(receipt.version);
        }
      } catch (e) { unchecked.set(id, receipt); keysFailed(e); }
      if (result !== "bad") forward.vouched(receipt);
      return result;
    })());
    return vouched.get(id);
  };

  /** The service signs nothing at all (`--no-receipts`: GET /keys lists no key) and has signed nothing of this game here. */
  const signsNothing = async () => {
    if (kept(gameId).receipts.length) return false;
    try { return !((await serviceKeys()).listing.keys || []).length; } catch { return false; }
  };

  /** `own`: the {game_id, version, head} the receipt must be of (a view's or a command answer's), else undefined (a
   *  streamed event's); `floor`: the receipt held as the read of the present was sent, else undefined. */
  const receive = async (receipt, { own, floor } = {}) => {
    const why = own ? notItsOwn(own, receipt) : "";
    const broken = receipt ? malformed(receipt) : "";
    if (broken) malformedSeen.push(broken);   // not kept: it would make the receipts file refuse to load
    let flag = !!why, fresh = false;
    if (receipt && !broken && receipt.game_id === gameId) {
      fresh = keep(receipt);
      const trusted = (await vouch(receipt)) !== "bad";
      if (fresh && trusted) {   // two histories for one version, each signed: the pair is the proof
        const same = kept(gameId).receipts.filter((r) => r.version === receipt.version);
        const results = await Promise.all(same.map(vouch));
        conflicting.push(...conflicts(same.filter((r, i) => results[i] !== "bad")).filter(([, b]) => b.sig === receipt.sig));
      }
      if (!why && floor !== undefined && trusted) forward.answered(floor, receipt);
      // a receipt that does not check out is said so (data-signatures=bad, and the verdict's signature check): it holds nothing
      flag = flag && trusted;
    } else if (!receipt && flag) flag = !(await signsNothing());   // --no-receipts: nothing to hold a view to
    if (flag) forward.unbound.push({ version: own.version, head: own.head, found: why });
    if (floor !== undefined) forward.reads++;
    paint();
    if (exportText !== null && (fresh || flag || forward.back.length)) check();   // what arrived after the end is checked too
  };
  const reading = () => {
    const floor = forward.sent();   // the highest receipt vouched for as the read leaves
    return (view) => receive(view.receipt, { own: { game_id: view.game_id, version: view.version, head: view.head }, floor });
  };
  /** A command's answer: the receipt of its own batch, `version` and `head`; it may be behind what was streamed since. */
  const answer = (a) => receive(a.receipt, { own: { game_id: gameId, version: a.version, head: a.head } });

  const check = async () => {
    if (checking) { again = true; return; }
    checking = (async () => {
      do {
        again = false;
        const record = kept(gameId);
        const known = await serviceKeys().catch((e) => ({ keys: null, missing: `GET /keys failed (${e.message})` }));
        const report = await verifyExport(exportText, { receipts: record.receipts, clientSeed: record.client_seed, seat: record.seat,
                                                        keys: known.keys, listings: known.listing ? [known.listing] : [],
                                                        noSignatures: known.missing, forward });
        show(withMoves(report, await checkMoves(exportText, record).catch((e) => failedMoves(e))));
        markVerified(gameId, report.ok && !!known.keys);   // passed, signatures and all: its record may make room later
      } while (again);
    })();
    try { await checking; } finally { checking = null; }
  };

  const show = (report) => {
    const first = report.problems[0];
    root.dataset.state = report.status;
    root.dataset.version = first ? first.version : "";
    const skipped = report.checks.filter((c) => c.ok === null);
    verdict.textContent = report.status === "passed"
      ? `This is the game you played: ${report.passed} checks passed.` + (report.moves ? ` ${report.moves}` : "")
        + skipped.map((c) => ` Not run: ${c.label.split(":")[0]} (${c.note}).`).join("")
      : report.status === "contested" ? `CONTESTED: ${report.contested}`   // the command line's words (replays/verdict.py)
      : `${first.version ? `Version ${first.version}` : "The export's header"} disagrees: ${first.what}: expected ${first.expected}, found ${first.found}.`;
    const result = (c) => (c.ok === null ? "not-run" : c.contested ? "contested" : c.ok ? "passed" : "failed");
    const mark = { "not-run": "○ not run", contested: "?", passed: "✓", failed: "✗" };
    list.replaceChildren(
      ...report.checks.map((c) => h("li", { dataset: { check: c.id, result: result(c) } },
        `${mark[result(c)]} ${c.label} (${c.count})${c.note ? ` — ${c.note}` : ""}`)),
      h("li", { dataset: { check: "redecide", result: "python" } },
        "Re-deciding every command with the rules is for python -m replays verify (the game seed is recomputed and shown here, not re-played)"),
      botsLine(exportText));
  };

  /** The export's report with the moves check (signing.js) added: its problems first by version, like the others. */
  const withMoves = (report, moves) => {
    const problems = [...report.problems, ...moves.problems].sort((a, b) => a.version - b.version);
    const passed = report.passed + (moves.check.ok ? moves.check.count : 0);
    const status = problems.length ? "failed" : report.status;
    return { ...report, checks: [...report.checks, moves.check], problems, passed, ok: status === "passed", status, moves: moves.words };
  };
  const failedMoves = (e) => ({ check: { id: "moves", label: "your moves: every command in your name signed by your own key", count: 0,
                                         ok: false, note: e.message }, problems: [{ version: 0, what: "your moves", expected: "a check that runs", found: e.message }], words: "" });

  const finished = async () => {
    if (ended) return;
    ended = true;
    root.dataset.state = "checking";
    verdict.textContent = "Checking the game's log against what you kept…";
    try {
      const r = await fetch(`/games/${gameId}/export`);   // anyone's once the game is over
      if (!r.ok) throw new Error(`GET /games/${gameId}/export answered ${r.status}`);
      exportText = await r.text();
      await check();
    } catch (e) {
      root.dataset.state = "error";
      verdict.textContent = `The log could not be checked: ${e.message}`;
    }
  };

  const stop = () => { if (keysRetry) keysRetry(); keysRetry = null; storage.removeEventListener("change", paint); };

  // what an earlier visit kept is vouched for again, so a step back behind it is seen after a reload too, and so are two
  // signed heads of one version that it kept
  const earlier = kept(gameId).receipts;
  Promise.all(earlier.map(vouch)).then((results) => {
    conflicting.push(...conflicts(earlier.filter((r, i) => results[i] !== "bad")));
    paint();
  }, () => {});
  paint();
  return { root, receive: (receipt) => receive(receipt), answer, reading, finished, stop };
}
