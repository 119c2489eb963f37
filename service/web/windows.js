// What the key listings the page holds (GET /keys as served) say of each receipt that disagrees with the log: the
// decision of replays/receipts.py `check()`, so that the page's verdict is the command line's (OK, REJECTED or
// CONTESTED; docs/fairness.md). A receipt whose signature checks out is the service's word and is never set aside: in
// its key's window, its disagreement refutes the log; under a key in doubt — dated after its listed retirement, a key
// the listings disagree about, a listing head a chain no longer holds, a key dropped from the listing — it contests it.
// evidence.js imports this module and this one its bytes helpers: neither uses the other's before it is called.
import { canonical, sha256 } from "./evidence.js";

const GENESIS = "0".repeat(64);
const FIELDS = { listed: ["key_id", "public_key", "at", "prev"], retired: ["key_id", "at", "prev"] };

/** What a chain entry's hash covers (service/events/keylist.py `_body`): its fields but `hash`, `type` included. */
const body = (e) => canonical(Object.fromEntries([...FIELDS[e.type].map((f) => [f, e[f]]), ["type", e.type]]));

/** keylist.py `check`: throws, in one line, unless every link checks, times never go back, each key is listed once
 *  (under its own id) and retired at most once, after it was listed. */
async function checkChain(entries) {
  let prev = GENESIS, last = 0;
  const seen = new Set(), gone = new Set();
  for (const [i, e] of entries.entries()) {
    const where = `entry ${i + 1} of the key listing (${e.type} ${e.key_id})`;
    if (!FIELDS[e.type]) throw new Error(`${where} is neither listed nor retired`);
    if (e.prev !== prev) throw new Error(`${where} is not chained to the entry before it: the listing was rewritten`);
    if (await sha256(prev + body(e)) !== e.hash) throw new Error(`${where} does not hash to its hash: it was changed after it was sealed`);
    if (!Number.isSafeInteger(e.at) || e.at < last) throw new Error(`${where} is dated before the entry before it: entries' times never go back`);
    if (e.type === "listed") {
      if (seen.has(e.key_id)) throw new Error(`${where} lists a key already listed`);
      seen.add(e.key_id);
    } else if (!seen.has(e.key_id) || gone.has(e.key_id)) {
      throw new Error(`${where} retires a key never listed or already retired`);
    } else gone.add(e.key_id);
    prev = e.hash; last = e.at;
  }
}

/** A listing's keys as sorted lines of what each says (id, public key, window): its `keys` must say what its chain
 *  records (keylist.py `keys_of`). */
const windowsOf = (keys) => keys.map((k) => `${k.key_id}:${k.public_key}:${k.not_before}:${k.not_after ?? null}`).sort().join("\n");
function keysOf(entries) {
  const ends = new Map(entries.filter((e) => e.type === "retired").map((e) => [e.key_id, e.at]));
  return entries.filter((e) => e.type === "listed")
    .map((e) => ({ key_id: e.key_id, public_key: e.public_key, not_before: e.at, not_after: ends.get(e.key_id) }));
}

/** The listings read as replays/receipts.py `load_keys` reads them: `until` (the earliest not_after any listing gave
 *  each key), `listed` (every window each listing gave), and each chain checked. Throws for a chain that does not
 *  check, names another head, or records other keys than its listing's: the command line refuses those listings. */
export async function readListings(listings) {
  const out = { listings: listings.length, until: new Map(), listed: new Map(), chains: [] };
  for (const listing of listings) {
    const keys = listing.keys || [];
    if (listing.entries) {
      await checkChain(listing.entries);
      const head = listing.entries.length ? listing.entries[listing.entries.length - 1].hash : GENESIS;
      if ((listing.head ?? head) !== head) throw new Error(`the key listing names the head ${listing.head}, its chain ends at ${head}`);
      if (windowsOf(keys) !== windowsOf(keysOf(listing.entries))) throw new Error("the key listing's keys are not the ones its own chain records");
      out.chains.push(listing.entries);
    }
    for (const k of keys) {
      const ends = [k.not_after, out.until.get(k.key_id)].filter((t) => t != null);
      out.until.set(k.key_id, ends.length ? Math.min(...ends) : null);
      out.listed.set(k.key_id, [...(out.listed.get(k.key_id) || []), `${k.not_before}:${k.not_after ?? null}`]);
    }
  }
  return out;
}

const late = (r, held) => held.until.get(r.key_id) != null && r.at > held.until.get(r.key_id);
function disputed(keyId, held) {
  const windows = held.listed.get(keyId) || [];
  return windows.length > 0 && (new Set(windows).size > 1 || windows.length < held.listings);
}

/** receipts.py `conflicts`: each key the listings disagree about, in its words. */
function conflicts(held) {
  const out = [];
  for (const [keyId, windows] of held.listed) {
    if (windows.length < held.listings) {
      out.push(`the key listings given disagree about key ${keyId}: ${windows.length} of the ${held.listings} name it — ` +
               "reported, not reconciled: one of them was changed after the fact");
    } else if (new Set(windows).size > 1) {
      const given = [...new Set(windows)].map((w) => w.split(":")).map(([a, b]) => `from ${a} until ${b === "null" ? "now" : b}`);
      out.push(`the key listings given disagree about key ${keyId} (${given.join("; ")}): reported, not reconciled — a ` +
               "listing that moved a key's retirement was changed after the fact");
    }
  }
  return out;
}

/** keylist.py `position`: how many entries the chain had when its head was `head`, or null: not one of its heads. */
function position(chain, head) {
  if (head === GENESIS) return 0;
  const i = chain.findIndex((e) => e.hash === head);
  return i < 0 ? null : i + 1;
}

/** receipts.py `_against_chains`: the receipts v2 a chain was rewritten after (not holding their head), and those a
 *  chain shows in their key's window (a retirement recorded after their head, dated before them: back-dated). */
function againstChains(receipts, held) {
  const rewritten = new Set(), inWindow = new Map(), notes = [];
  for (const r of receipts.filter((x) => x.listing != null)) {
    for (const chain of held.chains) {
      const end = chain.length ? chain[chain.length - 1].hash : GENESIS;
      const at = position(chain, r.listing);
      if (at === null) {
        rewritten.add(r);
        notes.push(`the key listing given that ends at head ${end.slice(0, 12)} does not hold the head ${r.listing.slice(0, 12)} ` +
                   `the receipt of version ${r.version} was signed under: it was rewritten after that head`);
        continue;
      }
      const retired = chain.slice(at).find((e) => e.type === "retired" && e.key_id === r.key_id);
      if (retired && retired.at < r.at) {
        inWindow.set(r, `the key listing given that ends at head ${end.slice(0, 12)} retires key ${r.key_id} at ${retired.at}, in an ` +
                        `entry after the head ${r.listing.slice(0, 12)} under which it signed version ${r.version} of time ${r.at}: ` +
                        "the retirement was back-dated");
      }
    }
  }
  return { rewritten, inWindow, notes: [...new Set(notes)] };
}

/** receipts.py `_uncovered`: a time the log was played at that no listed window covers — a key was dropped. */
export function uncovered(held, envs) {
  if (!held || !held.listings) return false;
  const windows = [...held.listed.values()].flat().map((w) => w.split(":").map((t) => (t === "null" ? null : Number(t))));
  return envs.some((e) => !windows.some(([a, b]) => a <= e.at && (b === null || e.at <= b)));
}

/** receipts.py `disagreement`: why a receipt refutes the log, in its words, or null when the log agrees with it. */
export function disagreement(r, envs) {
  const v = r.version;
  if (v > envs.length) {
    const end = envs.length ? envs[envs.length - 1].hash : GENESIS;
    return { version: v, what: "version (the log ends before it)", receipt: `version ${v} at head ${r.head}`, log: `${envs.length} events, ending at head ${end}` };
  }
  const [head, at] = v ? [envs[v - 1].hash, envs[v - 1].at] : [GENESIS, 0];
  if (r.head !== head) return { version: v, what: "head", receipt: r.head, log: head };
  if (r.at !== at) return { version: v, what: "time of the last event", receipt: String(r.at), log: String(at) };
  return null;
}

/**
 * receipts.py `check()` on the receipts whose signature checked out (`counted`, or every one when `held` is null: no
 * signature could be checked) and those under a key no listing names while the listings leave the log uncovered
 * (`dropped`). Returns {refuting: [{disagreement, backDated}], doubted: the receipts that contest the log, contested:
 * the command line's words, or ""}.
 */
export function judge(counted, dropped, envs, held) {
  const sorted = [...counted].sort((a, b) => a.version - b.version);
  const chains = held ? againstChains(sorted, held) : { rewritten: new Set(), inWindow: new Map(), notes: [] };
  const refuting = [], doubted = [], keys = [];
  const contest = (r, d) => { doubted.push([r, d]); if (!keys.includes(r.key_id)) keys.push(r.key_id); };
  for (const r of sorted) {
    const d = disagreement(r, envs);
    if (!d) continue;
    const doubt = held && (late(r, held) || disputed(r.key_id, held) || chains.rewritten.has(r));
    if (doubt && !chains.inWindow.has(r)) contest(r, d);
    else refuting.push({ disagreement: d, backDated: chains.inWindow.get(r) || "" });
  }
  const notes = [...(held ? conflicts(held) : []), ...chains.notes];
  const droppedKeys = [];
  for (const r of dropped) {
    const d = disagreement(r, envs);
    if (d) { contest(r, d); if (!droppedKeys.includes(r.key_id)) droppedKeys.push(r.key_id); }
  }
  if (droppedKeys.length) {
    notes.push(`the key listings given leave times this game was played at with no key signing, and receipts of key ` +
               `${droppedKeys.join(", ")}, which none of them names, disagree with the log: a key was dropped from the listing, ` +
               "or those receipts are not the service's");
  }
  return { refuting, doubted: doubted.map(([r]) => r), contested: doubted.length ? contestedWords(doubted, keys, notes) : "" };
}

/** replays/verdict.py `contested_part`, word for word. */
function contestedWords(doubted, keyIds, notes) {
  const d = doubted[0][1], keys = keyIds.join(", ");
  const versions = ranges([...new Set(doubted.map(([r]) => r.version))].sort((a, b) => a - b));
  return `${doubted.length} receipts of key ${keys}, whose signature checks out but whose key is in doubt (dated after its ` +
    "listed retirement, a key the listings given disagree about or none of them names, or under a listing head a chain " +
    `given no longer holds), disagree with the log at versions ${versions} (the first, of version ${d.version}: ${d.what}: ` +
    `the receipt says ${d.receipt}, the log has ${d.log}): either ${keys} leaked or its listing was changed after the fact` +
    notes.map((n) => `; ${n}`).join("");
}

/** verdict.py `ranges`: 3, 5–9, 12. */
function ranges(versions) {
  const out = [];
  for (let i = 0; i < versions.length; i++) {
    let j = i;
    while (j + 1 < versions.length && versions[j + 1] === versions[j] + 1) j++;
    out.push(i === j ? `${versions[i]}` : `${versions[i]}–${versions[j]}`);
    i = j;
  }
  return out.join(", ");
}
