// The player's own key (API.md "The player's own key: signed commands", docs/signed-commands.md): an Ed25519 key pair
// this browser makes with WebCrypto, its private half not extractable, kept in IndexedDB. A seat this page takes is
// keyed with it; every command the page sends from that seat is signed by it, and kept (storage.js) with the game's
// evidence; at the end of the game, every move in the player's name is checked to be one this key signed.
// Where WebCrypto is missing (an insecure origin: neither localhost nor HTTPS) or has no Ed25519, the page plays unkeyed
// and says so: the service then has only its own word for which moves were the player's.
import { canonical, hex, parseExport, unhex } from "./evidence.js";
import { kept, save } from "./storage.js";

const PREFIX = "free-parking/command/v1\n";
const utf8 = new TextEncoder();
const subtle = globalThis.crypto && globalThis.crypto.subtle;
const DB = "free-parking", STORE = "keys", SLOT = "player";

/** Why this page cannot sign ("" when it can): told to the player instead of signing. */
export let unkeyedBecause = subtle ? "" : "this page is not on a secure origin (HTTPS or localhost): the browser gives it no WebCrypto";

function idb(run) {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open(DB, 1);
    open.onupgradeneeded = () => open.result.createObjectStore(STORE);
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const tx = open.result.transaction(STORE, "readwrite");
      const request = run(tx.objectStore(STORE));
      tx.oncomplete = () => { open.result.close(); resolve(request.result); };
      tx.onerror = tx.onabort = () => { open.result.close(); reject(tx.error); };
    };
  });
}

let made = null;
/** This browser's key pair, {privateKey, publicKey, public_key: hex}, made once and kept; null when it cannot sign. */
export function ownKey() {
  if (!made) made = load().catch((e) => { unkeyedBecause = `this browser cannot keep an Ed25519 key (${e.name || e.message})`; return null; });
  return made;
}

async function load() {
  if (!subtle) return null;
  let pair = await idb((s) => s.get(SLOT));
  if (!pair) {
    const generated = await subtle.generateKey({ name: "Ed25519" }, false, ["sign", "verify"]);
    const raw = hex(await subtle.exportKey("raw", generated.publicKey));   // a public half is always exportable
    pair = { privateKey: generated.privateKey, publicKey: generated.publicKey, public_key: raw };
    await idb((s) => s.put(pair, SLOT));
  }
  return pair;
}

/** The bytes a keyed seat's player signs (service/events/command_sig.py): the prefix, then the canonical JSON of the
 *  command as the log stores it (`commandText`, its own fields and type, defaults omitted), its id, the version it is
 *  sent at and the game's id. Keys sorted: command, command_id, expected_version, game_id. */
export const commandBytes = (gameId, version, commandId, commandText) =>
  utf8.encode(`${PREFIX}{"command":${commandText},"command_id":${JSON.stringify(commandId)},` +
              `"expected_version":${version},"game_id":${JSON.stringify(gameId)}}`);

const TRANSPORT = new Set(["command_id", "expected_version", "sig"]);
const body = (command) => Object.fromEntries(Object.entries(command).filter(([k]) => !TRANSPORT.has(k)));

/** The key `gameId`'s seat was taken with by this page, when it is this browser's own (null: the seat is unkeyed). */
export async function seatKey(gameId) {
  const record = kept(gameId);
  if (!record.public_key) return null;
  const key = await ownKey();
  return key && key.public_key === record.public_key ? key : null;
}

/** `command` ready to send at `version`: from a keyed seat, with a new command id and the player's signature, which is
 *  kept with the game's evidence; from an unkeyed one, as it was. */
export async function signed(gameId, command, version) {
  const out = { ...body(command), expected_version: version };
  const key = await seatKey(gameId);
  if (!key) return out;
  out.command_id = `c-${hex(crypto.getRandomValues(new Uint8Array(8)))}`;
  const bytes = commandBytes(gameId, version, out.command_id, canonical(body(command)));
  out.sig = hex(await subtle.sign({ name: "Ed25519" }, key.privateKey, bytes));
  const record = kept(gameId);
  save({ ...record, signed: [...(record.signed || []), out.sig] });
  return out;
}

/** Whether `command` is among `legal` (compared as the log would store it): a command refused as stale (409) is signed
 *  again at the new version only while it is still the player's to make. */
export const stillLegal = (legal, command) => (legal || []).some((c) => canonical(body(c)) === canonical(body(command)));

/**
 * The moves check of the end-of-game verdict: every command the log attributes to this page's player — at the seat it
 * joined, and wherever a trade of places moved them — carries a signature of this browser's key over the bytes the
 * log rebuilds (docs/signed-commands.md). `record`: what storage.js keeps for the game ({seat, public_key, signed}).
 * Returns {check: {id, label, count, ok, note}, problems: [{version, what, expected, found}], words}.
 */
export async function checkMoves(exportText, record) {
  const label = "your moves: every command in your name signed by your own key";
  if (!record.public_key || record.seat == null) {
    return { check: { id: "moves", label, count: 0, ok: null, note: `you played unkeyed${unkeyedBecause ? `: ${unkeyedBecause}` : ""}` }, problems: [], words: "" };
  }
  let key;
  try {
    key = await subtle.importKey("raw", unhex(record.public_key), { name: "Ed25519" }, false, ["verify"]);
  } catch (e) {
    return { check: { id: "moves", label, count: 0, ok: null, note: `this browser's WebCrypto has no Ed25519 (${e.name || e.message})` }, problems: [], words: "" };
  }
  const mine = new Set(record.signed || []);
  const problems = [];
  let seat = record.seat, count = 0, fromHere = 0;
  for (const { env, members } of parseExport(exportText).envelopes) {
    if (env.type === "seat_taken" && env.public.seat === seat && env.public.player.public_key !== record.public_key) {
      problems.push({ version: env.seq, what: "your seat's key", expected: `your key ${record.public_key.slice(0, 16)}…`,
                     found: `${env.public.player.public_key || "no key"} recorded when the seat was taken` });
    }
    if (env.type === "seat_taken" && env.public.seat !== seat && env.public.player.public_key === record.public_key) {
      // the signed bytes name no seat: with your key at another seat too, your signatures would move either of them
      problems.push({ version: env.seq, what: "your key at another seat", expected: `your key at seat ${seat} alone`,
                     found: `your key recorded for seat ${env.public.seat} too` });
    }
    if (env.type === "places_traded" && [env.public.seat, env.public.other].includes(seat)) {
      seat = seat === env.public.seat ? env.public.other : env.public.seat;
    }
    if (env.actor !== `seat:${seat}` || env.command == null) continue;
    const bytes = env.command_id == null ? null : commandBytes(env.game_id, env.seq - 1, env.command_id, members.get("command"));
    const ok = bytes && /^[0-9a-f]{128}$/.test(env.sig || "") && await subtle.verify({ name: "Ed25519" }, key, unhex(env.sig), bytes);
    if (!ok) {
      problems.push({ version: env.seq, what: "a move in your name you did not sign", expected: "your signature over the command",
                     found: `${members.get("command").slice(0, 120)} with ${env.sig ? "another signature" : "no signature"}` });
    }
    count++;
    if (mine.has(env.sig)) fromHere++;
  }
  const words = problems.length ? "" : `Every move in your name is one you signed (${count} move${count === 1 ? "" : "s"}${fromHere < count ? `, ${fromHere} of them kept by this page` : ""}).`;
  return { check: { id: "moves", label, count, ok: problems.length === 0, note: "" }, problems, words };
}
