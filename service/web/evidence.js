// The checks of the evidence a player keeps (API.md, docs/fairness.md): a receipt's signature, and at the end of the
// game the export checked in the browser against the receipts and the client seed the page kept (keeping.js keeps
// them and watches them as they arrive). Only WebCrypto (SHA-256, HMAC-SHA256, Ed25519): no crypto code of our own.
// Re-deciding every command stays with `python -m replays verify`.
import { judge, readListings, uncovered } from "./windows.js";

const GENESIS = "0".repeat(64);
const RECEIPT_PREFIX = "free-parking/receipt/v1\n";
const RECEIPT_PREFIX_V2 = "free-parking/receipt/v2\n";
const utf8 = new TextEncoder();
const subtle = globalThis.crypto && globalThis.crypto.subtle;

// ---------------------------------------------------------------- bytes and canonical JSON

export const hex = (bytes) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
export function unhex(text) {
  if (typeof text !== "string" || !/^([0-9a-f]{2})*$/.test(text)) throw new Error(`not lowercase hex: ${String(text).slice(0, 80)}`);
  return Uint8Array.from(text.match(/../g) || [], (b) => parseInt(b, 16));
}
const concat = (...parts) => {
  const bytes = parts.map((p) => (typeof p === "string" ? utf8.encode(p) : p));
  const out = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of bytes) { out.set(b, at); at += b.length; }
  return out;
};

/** Python's str order (code points), which msgspec's `order="sorted"` uses; JS's default sort compares UTF-16 units. */
const byCodePoint = (a, b) => {
  const x = [...a], y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    if (x[i] !== y[i]) return x[i].codePointAt(0) - y[i].codePointAt(0);
  }
  return x.length - y.length;
};

/** msgspec's canonical JSON (service/events/envelope.py `canonical`): keys sorted, no whitespace, no floats.
 *  JSON.stringify escapes strings exactly as msgspec does (\" \\ \b \f \n \r \t, other controls as \u00xx). */
export function canonical(value) {
  if (value === null || typeof value === "boolean" || typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value)) throw new Error(`not a canonical integer: ${value}`);
    return String(value);
  }
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  return `{${Object.keys(value).sort(byCodePoint).map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(",")}}`;
}

/** The members of one JSON object's text as written: key → the exact text of its value. `public`, `command` and
 *  `secret` are msgspec.Raw in the Python: the hash and the digest cover their bytes as stored, never a re-encoding. */
export function rawMembers(text) {
  const out = new Map();
  let i = 0;
  const ws = () => { while (" \t\r\n".includes(text[i]) && i < text.length) i++; };
  const fail = (what) => { throw new Error(`not a JSON object at character ${i}: ${what}`); };
  const endOfString = (j) => {
    for (j++; j < text.length; j++) {
      if (text[j] === "\\") j++;
      else if (text[j] === '"') return j + 1;
    }
    return fail("an unterminated string");
  };
  const endOfValue = (j) => {
    if (text[j] === '"') return endOfString(j);
    if (text[j] !== "{" && text[j] !== "[") {
      while (j < text.length && !",}] \t\r\n".includes(text[j])) j++;
      return j;
    }
    let depth = 0;
    for (; j < text.length; j++) {
      const c = text[j];
      if (c === '"') { j = endOfString(j) - 1; continue; }
      if (c === "{" || c === "[") depth++;
      else if ((c === "}" || c === "]") && --depth === 0) return j + 1;
    }
    return fail("an unclosed object or list");
  };
  ws();
  if (text[i] !== "{") fail("no opening brace");
  i++; ws();
  if (text[i] === "}") return out;
  for (;;) {
    ws();
    if (text[i] !== '"') fail("a key");
    const end = endOfString(i);
    const key = JSON.parse(text.slice(i, end));
    i = end; ws();
    if (text[i] !== ":") fail("a colon");
    i++; ws();
    const vEnd = endOfValue(i);
    const raw = text.slice(i, vEnd);
    JSON.parse(raw);   // a value that is not JSON is not a log
    out.set(key, raw);
    i = vEnd; ws();
    if (text[i] === ",") { i++; continue; }
    if (text[i] === "}") return out;
    fail("a comma or closing brace");
  }
}

const BODY_FIELDS = ["game_id", "seq", "type", "public", "at", "prev_hash", "command", "actor", "command_id", "secret_digest", "sig"];
const RAW_FIELDS = new Set(["public", "command"]);
const DEFAULTS = { actor: '"server"', command_id: "null", secret_digest: "null", sig: "null" };   // omitted, as msgspec omits defaults

/** The bytes an envelope's hash covers (envelope.py `body_of` + `canonical`): every field but `hash` and `secret`, keys
 *  sorted, defaults omitted, `public` and `command` as stored, the other fields re-encoded as msgspec would. */
export function bodyOf(members) {
  const parts = [];
  for (const name of [...BODY_FIELDS].sort(byCodePoint)) {
    if (!members.has(name)) continue;
    const raw = members.get(name);
    const text = RAW_FIELDS.has(name) ? raw : canonical(JSON.parse(raw));
    if (DEFAULTS[name] === text) continue;
    parts.push(`${JSON.stringify(name)}:${text}`);
  }
  return `{${parts.join(",")}}`;
}

// ---------------------------------------------------------------- WebCrypto

export const sha256 = async (bytes) => hex(await subtle.digest("SHA-256", typeof bytes === "string" ? utf8.encode(bytes) : bytes));
export async function hmac(key, message) {
  const k = await subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return hex(await subtle.sign("HMAC", k, typeof message === "string" ? utf8.encode(message) : message));
}

/** The bytes a receipt's signature covers (service/events/receipt.py `signed_bytes`): v1, or v2 when it names the head
 *  of the key listing it was signed under (`listing`). */
export function receiptBytes(r) {
  const fields = { at: r.at, game_id: r.game_id, head: r.head, key_id: r.key_id, version: r.version };
  if (r.listing === undefined || r.listing === null) return utf8.encode(RECEIPT_PREFIX + canonical(fields));
  return utf8.encode(RECEIPT_PREFIX_V2 + canonical({ ...fields, listing: r.listing }));
}

export class NoEd25519 extends Error {}

/** The keys of GET /keys, imported for Ed25519 (key_id → CryptoKey); NoEd25519 when this browser's WebCrypto lacks it. */
export async function importKeys(listing) {
  const keys = new Map();
  for (const k of (listing && listing.keys) || []) {
    const raw = unhex(k.public_key);
    if ((await sha256(raw)).slice(0, 16) !== k.key_id) throw new Error(`key ${k.key_id} is not the id of its public key`);
    try {
      keys.set(k.key_id, await subtle.importKey("raw", raw, { name: "Ed25519" }, false, ["verify"]));
    } catch (e) {
      throw new NoEd25519(`this browser's WebCrypto has no Ed25519 (${e.name || e.message})`);
    }
  }
  return keys;
}

/** "ok", "bad" (the signature does not check out) or "unknown key". */
export async function checkSignature(receipt, keys) {
  const key = keys.get(receipt.key_id);
  if (!key) return "unknown key";
  try {
    return (await subtle.verify({ name: "Ed25519" }, key, unhex(receipt.sig), receiptBytes(receipt))) ? "ok" : "bad";
  } catch {
    return "bad";
  }
}

/** Receipts of one version that disagree (head or time): the service signed two histories. */
export function conflicts(receipts) {
  const byVersion = new Map();
  const out = [];
  for (const r of receipts) {
    const seen = byVersion.get(r.version);
    if (!seen) byVersion.set(r.version, r);
    else if (seen.head !== r.head || seen.at !== r.at) out.push([seen, r]);
  }
  return out;
}

// ---------------------------------------------------------------- the export, checked

/** An export's header and envelopes, each envelope with its members' exact text. */
export function parseExport(text) {
  const lines = text.split("\n").filter((l) => l.trim());
  if (!lines.length) throw new Error("the export is empty");
  return {
    header: JSON.parse(lines[0]),
    envelopes: lines.slice(1).map((line) => {
      const members = rawMembers(line);
      return { env: JSON.parse(line), members };
    }),
  };
}

/**
 * Check an export in the browser. `receipts`: the ones the page kept; `clientSeed`/`seat`: what this page sent when it
 * joined; `keys`: importKeys' map, or null when Ed25519 is missing (`noSignatures` says why); `listings`: the GET /keys
 * answers the page holds, whose windows put keys in doubt (windows.js). Returns {checks: [{id, label, count, ok, note,
 * contested?}], problems: [{version, what, expected, found}], passed, status, contested, gameSeed, seeding}: `status`
 * "passed", "failed" or "contested" (the command line's OK, REJECTED, CONTESTED), `contested` its words.
 * `forward`: {reads, back: [[held, answered], ...], unbound: [{version, head, found}, ...]} (keeping.js `Forward`), the
 * page's reads of the present state, those the service answered behind a receipt it had signed, and the views (and
 * command answers) that came without a receipt of their own version and head. Each problem names the version (seq) where the log
 * disagrees; 0 is the header.
 */
export async function verifyExport(text, { receipts = [], clientSeed = null, seat = null, keys = null, listings = [],
                                           noSignatures = "", forward = null } = {}) {
  const problems = [];
  const checks = [];
  const problem = (version, what, expected, found) => problems.push({ version, what, expected: String(expected), found: String(found) });
  const check = (id, label, count, ok, note = "") => checks.push({ id, label, count, ok, note });
  let header, envelopes;
  try {
    ({ header, envelopes } = parseExport(text));
  } catch (e) {
    problem(0, "the export", "an NDJSON log", e.message);
    return finish(checks, problems);
  }
  const envs = envelopes.map((e) => e.env);
  const before = problems.length;

  // 1. the hash chain: seqs without a gap, each prev_hash the hash before, time never back, each hash recomputed
  let prev = GENESIS, lastAt = 0, chained = 0;
  for (const [i, { env, members }] of envelopes.entries()) {
    const seq = i + 1;
    if (env.seq !== seq) { problem(seq, "seq", seq, env.seq); break; }
    if (env.game_id !== header.game_id) { problem(seq, "game id", header.game_id, env.game_id); break; }
    if (env.prev_hash !== prev) { problem(seq, "prev_hash (not chained to the event before)", prev, env.prev_hash); break; }
    if (env.at < lastAt) { problem(seq, "time (it went back)", `at ≥ ${lastAt}`, env.at); break; }
    const actual = await sha256(prev + bodyOf(members));
    if (env.hash !== actual) { problem(seq, "hash (the envelope was altered after it was sealed)", actual, env.hash); break; }
    prev = env.hash; lastAt = env.at; chained++;
  }
  const last = envs[envs.length - 1];
  if (problems.length === before && (header.version !== envs.length || header.head !== (last ? last.hash : GENESIS))) {
    problem(0, "the header's end", `version ${envs.length}, head ${last ? last.hash : GENESIS}`, `version ${header.version}, head ${header.head}`);
  }
  check("chain", "hash chain: every event's hash recomputed from its canonical bytes", chained, problems.length === before);

  // 2. the seed commitment: sha256(revealed server seed) is what game_created published at seq 1
  const created = envs[0] && envs[0].type === "game_created" ? envs[0].public : {};
  const revealed = [...envs].reverse().find((e) => e.type === "seed_revealed");
  const seedHex = header.seed || (revealed && revealed.public.seed) || null;
  let seed = null;
  if (!seedHex) {
    check("commitment", "seed commitment", 0, null, "the server seed is not revealed in this log");
  } else {
    const n = problems.length;
    try { seed = unhex(seedHex); } catch { problem(revealed ? revealed.seq : 0, "seed", "hex digits", seedHex); }
    if (seed) {
      const hash = await sha256(seed);
      if (hash !== created.seed_commitment) problem(1, "seed commitment", `sha256 of the revealed seed, ${hash}`, created.seed_commitment);
      if (header.seed_commitment !== created.seed_commitment) problem(0, "seed commitment", created.seed_commitment, header.seed_commitment);
      if (revealed && revealed.public.seed !== seedHex) problem(revealed.seq, "seed revealed", seedHex, revealed.public.seed);
    }
    check("commitment", "seed commitment: sha256(revealed server seed) is game_created's", 1, problems.length === n);
  }

  // 3. the seeding: this page's own client seed, every derived one, and the game seed recomputed
  const seeding = created.seeding || "legacy";
  const seats = envs.filter((e) => e.type === "seat_taken");
  let gameSeed = null;
  {
    const n = problems.length;
    let count = 0;
    // the same refusals as replays verify (replays/seeds.py): a legacy log that records client seeds or the signing key
    // had its seeding taken out; a seed this page sent into a game not drawn with it played no part in the deal
    const withSeed = seats.find((e) => e.public.client_seed != null);
    if (seeding === "legacy" && (withSeed || created.key_id)) {
      count++;
      problem(1, withSeed ? "client seeds recorded, none of them in the deal (game_created records no seeding)"
                          : "seeding (game_created records none)",
              "combined or fixed: a log from after client seeds says how its seed was made",
              withSeed ? `no seeding, yet seat ${withSeed.public.seat}'s client seed is recorded (seq ${withSeed.seq})`
                       : "no seeding, yet game_created names the key that signs receipts");
    }
    if (clientSeed !== null && seat !== null && seeding !== "combined") {
      count++;
      const mine = seats.find((e) => e.public.seat === seat);
      problem(mine ? mine.seq : 1, `seat ${seat}'s client seed (did it go into the deal?)`,
              "a combined game: the game's seed derived from the server's and every seat's client seed",
              `a ${seeding} game: the client seed this page sent played no part in the deal`);
    } else if (clientSeed !== null && seat !== null) {
      const mine = seats.find((e) => e.public.seat === seat);
      count++;
      if (!mine) problem(0, `seat ${seat}'s client seed`, `a seat_taken of seat ${seat}`, "none");
      else if (mine.public.client_seed !== clientSeed || mine.public.client_seed_from !== "player") {
        problem(mine.seq, `seat ${seat}'s client seed (the one this page sent)`, `${clientSeed} from the player`,
                `${mine.public.client_seed} from the ${mine.public.client_seed_from}`);
      }
    }
    if (seed && seeding === "combined") {
      for (const e of seats.filter((s) => s.public.client_seed_from === "server")) {
        count++;
        const derived = await hmac(seed, `free-parking/client-seed/v1:${e.public.seat}`);
        if (e.public.client_seed !== derived) problem(e.seq, `seat ${e.public.seat}'s derived client seed`, derived, e.public.client_seed);
      }
      const bySeat = [...seats].sort((a, b) => a.public.seat - b.public.seat);
      if (bySeat.length === (created.config || {}).seats) {   // derived when the last seat is taken, not before
        try {
          gameSeed = await hmac(seed, concat("free-parking/game-seed/v1", ...bySeat.map((e) => unhex(e.public.client_seed))));
        } catch (e) {
          problem(bySeat.length ? bySeat[0].seq : 0, "client seeds", "64 hex digits each", e.message);
        }
      }
    }
    const note = seeding === "combined" ? (gameSeed ? `game seed recomputed: ${gameSeed}` : "")
      : `${seeding} seeding: the deal was keyed by the server seed as is${clientSeed ? "; your client seed is recorded and changed nothing" : ""}`;
    check("seeding", "client seeds: yours as sent, every derived one from the server seed", count, problems.length === n, note);
  }

  // 4. every secret against its digest: HMAC-SHA256(server seed, "secret:<seq>" ‖ the secret's bytes as stored)
  {
    const n = problems.length;
    let count = 0, withheld = 0;
    for (const { env, members } of envelopes) {
      const secret = members.has("secret") ? members.get("secret") : "null";
      if (env.secret_digest == null) {
        if (secret !== "null") problem(env.seq, "secret", "no secret (the event has no digest)", secret);
        continue;
      }
      if (secret === "null" || !seed) { withheld++; continue; }
      const actual = await hmac(seed, `secret:${env.seq}${secret}`);
      if (actual !== env.secret_digest) problem(env.seq, "secret (does not match its digest)", `a secret whose digest is ${env.secret_digest.slice(0, 16)}…`, `${secret.slice(0, 200)}, whose digest is ${actual.slice(0, 16)}…`);
      count++;
    }
    check("secrets", "secret digests: every hidden card against the revealed seed", count, problems.length === n, withheld ? `${withheld} withheld, not checked` : "");
  }

  // 5. the receipts: signed by the service's key, two of one version agree, and the log has each one's head and time —
  // or, under a key the listings put in doubt, the log is contested (windows.js: the command line's decision)
  const mine = [...receipts, ...(header.receipt ? [header.receipt] : [])].filter((r) => r && r.game_id === header.game_id);
  let held = null, counted = mine, dropped = [];
  if (keys) {
    const n = problems.length;
    try { held = await readListings(listings); }
    catch (e) { problem(0, "the key listing (GET /keys)", "a listing whose chain checks link by link", e.message); }
    const results = await Promise.all(mine.map((r) => checkSignature(r, keys)));
    // a key none of the listings names, while they leave a time of this game unsigned: dropped from them, judged below
    const gap = uncovered(held, envs);
    dropped = mine.filter((r, i) => gap && results[i] === "unknown key");
    counted = mine.filter((r, i) => results[i] === "ok");
    for (const [i, r] of mine.entries()) {
      if (results[i] !== "ok" && !dropped.includes(r)) problem(r.version, "receipt signature", `a signature by key ${r.key_id} that checks out`, results[i]);
    }
    const kept = receipts.filter((r) => r && r.game_id === header.game_id);
    if (kept.length && !kept.some((r) => counted.includes(r))) {   // as the command line: they are no check of the log at all
      problem(0, "receipts", "a receipt signed by the service", `${kept.length} receipts of game ${header.game_id}, none signed by a key given`);
    }
    check("signatures", "receipt signatures (Ed25519, GET /keys)", mine.length, problems.length === n);
  } else {
    check("signatures", "receipt signatures (Ed25519, GET /keys)", 0, null, `could not run: ${noSignatures || "no keys"}`);
  }
  let contested = "";
  {
    const n = problems.length;
    const judged = judge(counted, dropped, envs, held);
    const doubted = new Set(judged.doubted);   // two receipts of one version, one of them in doubt: contested, as the command line says
    for (const [a, b] of conflicts(mine.filter((r) => !doubted.has(r)))) problem(a.version, "two receipts of one version", `head ${a.head} at ${a.at}`, `head ${b.head} at ${b.at}`);
    for (const { disagreement: d, backDated } of judged.refuting) {
      problem(d.version, `receipt: ${d.what}`, `the service signed ${d.receipt}`, `the log has ${d.log}${backDated ? `; ${backDated}` : ""}`);
    }
    contested = judged.contested;
    check("receipts", "your receipts against the chain: the log has each one's head and time", mine.length, problems.length === n && !contested,
          contested ? "contested: receipts under a key in doubt disagree with the log" : "");
    if (contested) checks[checks.length - 1].contested = true;
  }
  if (forward) {   // heads only moved forward: no read of the present answered behind a receipt held when it was sent
    const n = problems.length;
    for (const [held, answered] of forward.back) {
      problem(held.version, "the service's present went back", `version ${held.version} or later (head ${held.head}, signed before the read was sent)`,
              `an answer at version ${answered.version} (head ${answered.head})`);
    }
    for (const { version, head, found } of forward.unbound || []) {
      problem(version, "a view without its own receipt", `a receipt of version ${version}, head ${head}`, found);
    }
    check("forward", "heads only moved forward: every view with its own receipt, at or after the receipts you held when you asked",
          forward.reads, problems.length === n);
  }
  return finish(checks, problems, gameSeed, seeding, contested);
}

/** `status`: the command line's verdict — "failed" (REJECTED) for any problem, else "contested" or "passed" (OK). */
function finish(checks, problems, gameSeed = null, seeding = "", contested = "") {
  problems.sort((a, b) => a.version - b.version);
  const passed = checks.filter((c) => c.ok).reduce((n, c) => n + c.count, 0);
  const status = problems.length ? "failed" : contested ? "contested" : "passed";
  return { checks, problems, passed, ok: status === "passed", status, contested, gameSeed, seeding };
}
