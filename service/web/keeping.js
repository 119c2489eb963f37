// What this browser keeps of a game (docs/fairness.md, "In the player's page"): every receipt it was shown and the
// client seed it brought, in localStorage; and the checks on them as they arrive, before any export exists — two
// receipts of one version that disagree, and a service whose present state goes back behind a receipt it signed.
import { h } from "./tables/common.js";
import { checkSignature, conflicts, hex, importKeys, verifyExport } from "./evidence.js";

const STORE = (gameId) => `fp.evidence.${gameId}`;

/** {game_id, seat, client_seed, receipts: [...]} as kept for `gameId` (localStorage). */
export function kept(gameId) {
  try {
    const found = JSON.parse(localStorage.getItem(STORE(gameId)));
    if (found && Array.isArray(found.receipts)) return found;
  } catch { /* nothing kept, or not ours */ }
  return { game_id: gameId, seat: null, client_seed: null, receipts: [] };
}
const save = (record) => localStorage.setItem(STORE(record.game_id), JSON.stringify(record));

/** The client seed this page brings to `gameId` (32 bytes of `crypto.getRandomValues`, 64 lowercase hex; docs/rng.md):
 *  made once and kept before it is sent, so a join that fails and is tried again sends the same one — an operator who
 *  refused a join cannot have a new seed to try against the deal it would give. */
export function clientSeedFor(gameId) {
  const record = kept(gameId);
  if (record.client_seed) return record.client_seed;
  const seed = hex(crypto.getRandomValues(new Uint8Array(32)));
  save({ ...record, client_seed: seed });
  return seed;
}

export function rememberClientSeed(gameId, seat, clientSeed) {
  save({ ...kept(gameId), seat, client_seed: clientSeed });
}

const SAME = (a, b) => a.version === b.version && a.head === b.head && a.at === b.at && a.key_id === b.key_id && a.sig === b.sig;

/** Keep a receipt; false when this very receipt was kept already. */
export function keep(receipt) {
  if (!receipt || typeof receipt.game_id !== "string" || typeof receipt.version !== "number") return false;
  const record = kept(receipt.game_id);
  if (record.receipts.some((r) => SAME(r, receipt))) return false;
  const { game_id, version, head, at, key_id, sig } = receipt;
  record.receipts.push({ game_id, version, head, at, key_id, sig });
  save(record);
  return true;
}

/**
 * Heads only move forward. A later answer may carry a lower version than a receipt already kept — a command's answer
 * names its own batch, and the bots' moves after it may have been streamed first — so versions are not compared in
 * the order answers arrive. What the service cannot honestly do is answer a read of the present state (a view, or the
 * view of a command's answer) at a version before one it had signed when the read was *sent*: the log only grows, so
 * that answer says it lost or rewrote history it had vouched for. `sent()` notes, as a read leaves, the highest
 * receipt vouched for then; `answered(floor, receipt)` is the [held, answered] pair that proves a step back, or null.
 */
export class Forward {
  constructor() {
    this.highest = null;   // the receipt of the highest version vouched for (its signature checked, or uncheckable)
    this.reads = 0;        // answers to reads of the present state held to it
    this.back = [];        // [held, answered]: the service's present went back behind a receipt it signed
  }

  vouched(receipt) {
    if (!this.highest || receipt.version > this.highest.version) this.highest = receipt;
  }

  sent() { return this.highest; }

  answered(floor, receipt) {
    this.reads++;
    if (!floor || receipt.version >= floor.version) return null;
    const pair = [floor, receipt];
    this.back.push(pair);
    return pair;
  }
}

// ---------------------------------------------------------------- the panel on a game's page

let keysPromise = null;
/** GET /keys, and the keys imported for Ed25519: {listing, keys} or {listing, keys: null, missing: why}. */
function serviceKeys(again = false) {
  if (!keysPromise || again) {
    keysPromise = (async () => {
      const listing = await (await fetch("/keys")).json();
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

/** The evidence box of a game's page. `receive(receipt)` from every answer and streamed event; `reading()` as a read of
 *  the present state (a view, or a command whose answer brings one) is sent: it gives the function its answer's
 *  receipt goes to instead. `finished()` once the game is over, to check the export. */
export function evidencePanel(gameId) {
  const root = h("section.box.evidence#evidence", { dataset: { state: "keeping" } });
  const status = h("p#evidence-status", {}, "");
  const signatures = h("p#evidence-signatures.small", {}, "");
  const verdict = h("p#evidence-verdict", {}, "");
  const list = h("ul#evidence-checks.small");
  const files = h("p#evidence-files.small");
  root.append(h("h3", {}, "Evidence you keep"), status, signatures, verdict, list, files);
  const sig = { ok: 0, bad: [], missing: "" };
  const vouched = new Map();   // receipt → its check: "ok", "bad", or "unchecked" (no Ed25519: it came over the page's own connection)
  const forward = new Forward();
  const conflicting = [];
  let ended = false, exportText = null, checking = null, again = false;

  const paint = () => {
    const record = kept(gameId);
    status.textContent = `${record.receipts.length} signed receipts kept in this browser` +
      (record.client_seed ? `; your client seed for seat ${record.seat}: ${record.client_seed}` : "");
    signatures.textContent = sig.missing
      ? `The signature check could not run: ${sig.missing}. The receipts are kept; check them with python -m replays verify.`
      : sig.bad.length ? `${sig.bad.length} receipts do not check out under the service's key (version ${sig.bad[0]})`
      : `${sig.ok} receipt signatures checked (Ed25519, GET /keys)`;
    root.dataset.signatures = sig.missing ? "unavailable" : sig.bad.length ? "bad" : "ok";
    root.dataset.reads = forward.reads;
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
    }
  };
  files.append("Download: ", saveButton("evidence-receipts", `receipts-${gameId}.json`, () => kept(gameId).receipts), " ",
               saveButton("evidence-keys", "keys.json", async () => (await serviceKeys()).listing),
               h("span.muted", {}, ` — then python -m replays verify LOG --receipts receipts-${gameId}.json --key keys.json`));

  /** The receipt's signature, checked once: a receipt that does not check out is kept, and counts for nothing live. */
  const vouch = (receipt) => {
    const id = [receipt.version, receipt.head, receipt.at, receipt.key_id, receipt.sig].join(":");   // all it signs, and the sig
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
      } catch (e) { sig.missing = `GET /keys failed (${e.message})`; }
      if (result !== "bad") forward.vouched(receipt);
      return result;
    })());
    return vouched.get(id);
  };

  const receive = async (receipt, floor = undefined) => {
    if (!receipt || receipt.game_id !== gameId) return;
    const fresh = keep(receipt);
    const trusted = (await vouch(receipt)) !== "bad";
    if (fresh && trusted) {   // two histories for one version, each signed: the pair is the proof
      const same = kept(gameId).receipts.filter((r) => r.version === receipt.version);
      const results = await Promise.all(same.map(vouch));
      conflicting.push(...conflicts(same.filter((r, i) => results[i] !== "bad")).filter(([, b]) => b.sig === receipt.sig));
    }
    if (floor !== undefined && trusted) forward.answered(floor, receipt);
    paint();
    if (exportText !== null && (fresh || forward.back.length)) check();   // what arrived after the end is checked too
  };
  const reading = () => {
    const floor = forward.sent();   // the highest receipt vouched for as the read leaves
    return (receipt) => receive(receipt, floor);
  };

  const check = async () => {
    if (checking) { again = true; return; }
    checking = (async () => {
      do {
        again = false;
        const record = kept(gameId);
        const known = await serviceKeys().catch((e) => ({ keys: null, missing: `GET /keys failed (${e.message})` }));
        const report = await verifyExport(exportText, { receipts: record.receipts, clientSeed: record.client_seed, seat: record.seat,
                                                        keys: known.keys, noSignatures: known.missing, forward });
        show(report);
      } while (again);
    })();
    try { await checking; } finally { checking = null; }
  };

  const show = (report) => {
    const first = report.problems[0];
    root.dataset.state = report.ok ? "passed" : "failed";
    root.dataset.version = first ? first.version : "";
    const skipped = report.checks.filter((c) => c.ok === null);
    verdict.textContent = report.ok
      ? `This is the game you played: ${report.passed} checks passed.` + skipped.map((c) => ` Not run: ${c.label.split(":")[0]} (${c.note}).`).join("")
      : `${first.version ? `Version ${first.version}` : "The export's header"} disagrees: ${first.what}: expected ${first.expected}, found ${first.found}.`;
    list.replaceChildren(
      ...report.checks.map((c) => h("li", { dataset: { check: c.id, result: c.ok === null ? "not-run" : c.ok ? "passed" : "failed" } },
        `${c.ok === null ? "○ not run" : c.ok ? "✓" : "✗"} ${c.label} (${c.count})${c.note ? ` — ${c.note}` : ""}`)),
      h("li", { dataset: { check: "redecide", result: "python" } },
        "Re-deciding every command with the rules is for python -m replays verify (the game seed is recomputed and shown here, not re-played)"));
  };

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

  // what an earlier visit kept is vouched for again, so a step back behind it is seen after a reload too
  Promise.all(kept(gameId).receipts.map(vouch)).then(paint, () => {});
  paint();
  return { root, receive, reading, finished };
}
