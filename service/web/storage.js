// Where this browser keeps a game's evidence (docs/fairness.md, "What it keeps"): one record per game in localStorage,
// `fp.evidence.<game_id>` = {game_id, seat, client_seed, receipts, verified?}. Only well-formed receipts are kept (a
// malformed one would make `python -m replays verify` refuse the whole file). When the storage is full, the records of
// games that are over and whose export this page checked and passed (`verified`, the time it passed) make room, oldest
// first; if there is still no room, the record is kept in this page's memory only, and `storage.full` says which games.
import { hex } from "./evidence.js";

const PREFIX = "fp.evidence.";
const STORE = (gameId) => `${PREFIX}${gameId}`;
const HEX = (n) => new RegExp(`^[0-9a-f]{${n}}$`);
const [HEAD, KEY_ID, SIG] = [HEX(64), HEX(16), HEX(128)];

/** Why `receipt` is not a receipt (a field missing or of the wrong shape), or "" when it is well formed: game_id a
 *  string, version a non-negative integer, head 64 lowercase hex digits, at an integer, key_id 16, sig 128; a v2
 *  receipt's listing 64. */
export function malformed(receipt) {
  if (!receipt || typeof receipt !== "object" || Array.isArray(receipt)) return "not an object";
  if (typeof receipt.game_id !== "string" || !receipt.game_id) return "game_id is not a string";
  if (!Number.isSafeInteger(receipt.version) || receipt.version < 0) return "version is not a non-negative integer";
  if (typeof receipt.head !== "string" || !HEAD.test(receipt.head)) return "head is not 64 lowercase hex digits";
  if (!Number.isSafeInteger(receipt.at)) return "at is not an integer";
  if (typeof receipt.key_id !== "string" || !KEY_ID.test(receipt.key_id)) return "key_id is not 16 lowercase hex digits";
  if (typeof receipt.sig !== "string" || !SIG.test(receipt.sig)) return "sig is not 128 lowercase hex digits";
  if (receipt.listing != null && (typeof receipt.listing !== "string" || !HEAD.test(receipt.listing))) {
    return "listing is not 64 lowercase hex digits";
  }
  return "";
}

/** The records this page could not write to localStorage (it was full): game_id → record, kept while the page is open. */
const unsaved = new Map();
export const storage = new EventTarget();   // "change" when a game's record can or cannot be kept in localStorage
storage.full = new Set();                   // the games whose record is in this page's memory only

/** {game_id, seat, client_seed, receipts: [...]} as kept for `gameId`: its well-formed receipts only. */
export function kept(gameId) {
  let found = unsaved.get(gameId);
  if (!found) {
    try { found = JSON.parse(localStorage.getItem(STORE(gameId))); } catch { /* nothing kept, or not ours */ }
  }
  if (found && typeof found === "object" && Array.isArray(found.receipts)) {
    return { ...found, receipts: found.receipts.filter((r) => !malformed(r)) };
  }
  return { game_id: gameId, seat: null, client_seed: null, receipts: [] };
}

const quota = (e) => e && (e.name === "QuotaExceededError" || e.name === "NS_ERROR_DOM_QUOTA_REACHED" || e.code === 22);

/** The keys of records that may make room: games over and checked (their export passed), the oldest check first. */
function evictable(except) {
  const out = [];
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (!key || !key.startsWith(PREFIX) || key === STORE(except)) continue;
    try {
      const record = JSON.parse(localStorage.getItem(key));
      if (record && Number.isSafeInteger(record.verified)) out.push([record.verified, key]);
    } catch { /* not a record of ours: left alone */ }
  }
  return out.sort((a, b) => a[0] - b[0]).map(([, key]) => key);
}

/** Write `record`; when the storage is full, evict verified games' records (oldest first) until it fits. False when it
 *  still does not: the record stays in this page's memory (see `storage.full`). */
export function save(record) {
  const id = record.game_id, text = JSON.stringify(record);
  let victims = null;
  for (;;) {
    try {
      localStorage.setItem(STORE(id), text);
      break;
    } catch (e) {
      if (!quota(e)) throw e;
      victims = victims || evictable(id);
      if (!victims.length) {
        unsaved.set(id, record);
        if (!storage.full.has(id)) { storage.full.add(id); storage.dispatchEvent(new Event("change")); }
        return false;
      }
      localStorage.removeItem(victims.shift());
    }
  }
  unsaved.delete(id);
  if (storage.full.delete(id)) storage.dispatchEvent(new Event("change"));
  return true;
}

/** The client seed this page brings to `gameId` (32 bytes of `crypto.getRandomValues`, 64 lowercase hex; docs/rng.md):
 *  made once and kept before it is sent, so a join that fails and is tried again sends the same one — an operator who
 *  refused a join cannot have a new seed to try against the deal it would give. */
export function clientSeedFor(gameId) {
  const record = kept(gameId);
  if (record.client_seed) return record.client_seed;
  const seed = newSeed();
  save({ ...record, client_seed: seed });
  return seed;
}

/** A fresh client seed: 32 bytes of `crypto.getRandomValues`, 64 lowercase hex (docs/rng.md). */
export const newSeed = () => hex(crypto.getRandomValues(new Uint8Array(32)));

/** The client seed this page enters tournament `tournamentId` with, made and kept before it is sent for the reason a
 *  seat's is (clientSeedFor): an entry refused and tried again brings the same share of the tournament's seed. Kept
 *  apart from the games' evidence records (`fp.entry.<id>`): it is no game's. */
export function entrySeedFor(tournamentId) {
  const key = `fp.entry.${tournamentId}`;
  const known = localStorage.getItem(key);
  if (known && HEX(64).test(known)) return known;
  const seed = newSeed();
  localStorage.setItem(key, seed);
  return seed;
}

/** The seat taken, the client seed it brought and the key it was taken with (null: unkeyed; signing.js). */
export function rememberClientSeed(gameId, seat, clientSeed, publicKey = null) {
  const record = { ...kept(gameId), seat, client_seed: clientSeed };
  if (publicKey) record.public_key = publicKey; else delete record.public_key;
  save(record);
}

/** The game's export was checked: `ok` marks its record as one that may make room when the storage is full. */
export function markVerified(gameId, ok) {
  const record = kept(gameId);
  if (ok === Number.isSafeInteger(record.verified)) return;
  if (ok) record.verified = Date.now(); else delete record.verified;
  save(record);
}

const SAME = (a, b) => a.version === b.version && a.head === b.head && a.at === b.at && a.key_id === b.key_id && a.sig === b.sig;

/** Keep a well-formed receipt (the caller checks `malformed` first); false when this very receipt was kept already. */
export function keep(receipt) {
  if (malformed(receipt)) return false;
  const record = kept(receipt.game_id);
  if (record.receipts.some((r) => SAME(r, receipt))) return false;
  const { game_id, version, head, at, key_id, sig, listing } = receipt;
  record.receipts.push({ game_id, version, head, at, key_id, ...(listing != null ? { listing } : {}), sig });
  save(record);
  return true;
}
