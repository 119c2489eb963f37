// The public HTTP API (../shared/API.md) through fetch, and the tokens this browser keeps in localStorage.
import { ownKey, signed } from "./signing.js";
import { clientSeedFor, rememberClientSeed } from "./storage.js";

const PLAYER_KEY = "fp.player";   // {player_id, name, token} from POST /players
const SEATS_KEY = "fp.seats";     // {game_id: token} for seats taken as a guest (or as the player)

export class ApiError extends Error {
  constructor(status, body) {
    const error = (body && body.error) || {};
    super(error.message || `HTTP ${status}`);
    this.status = status;
    this.code = error.code || "http_error";
    this.detail = error.detail || {};
  }
}

/** The service's reachability as this page last saw it: "up" or "down" events on `network` when it changes. A request
 *  that gets no answer (fetch throws) or a gateway/unavailable status (502, 503, 504) is "down"; any other answer "up". */
export const network = new EventTarget();
network.up = true;
function reachable(up) {
  if (network.up === up) return;
  network.up = up;
  network.dispatchEvent(new Event(up ? "up" : "down"));
}
const OUTAGE = new Set([502, 503, 504]);

export async function call(method, path, { body, token, text = false } = {}) {
  const headers = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  let r;
  try {
    r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    reachable(false);
    const err = new ApiError(0, { error: { message: "The service cannot be reached", code: "unreachable" } });
    err.offline = true;
    throw err;
  }
  reachable(!OUTAGE.has(r.status));
  if (!r.ok) {
    let data = null;
    try { data = await r.json(); } catch { /* not JSON */ }
    const err = new ApiError(r.status, data);
    err.offline = OUTAGE.has(r.status);
    throw err;
  }
  return text ? r.text() : r.json();
}

export const get = (path, token) => call("GET", path, { token });
export const post = (path, body, token) => call("POST", path, { body, token });

export function player() {
  try { return JSON.parse(localStorage.getItem(PLAYER_KEY)) || null; } catch { return null; }
}
export function setPlayer(p) {
  if (p) localStorage.setItem(PLAYER_KEY, JSON.stringify(p)); else localStorage.removeItem(PLAYER_KEY);
}

function seats() {
  try { return JSON.parse(localStorage.getItem(SEATS_KEY)) || {}; } catch { return {}; }
}
export function rememberSeat(gameId, token) {
  const all = seats();
  all[gameId] = token;
  localStorage.setItem(SEATS_KEY, JSON.stringify(all));
}
/** The token to look at a game with: the seat's, else the player's, else none (a spectator). */
export function tokenFor(gameId) {
  return seats()[gameId] || (player() && player().token) || null;
}

/** Sign back in with a saved key, `<player_id>:<token>` (what the page shows to save), checked against the API: the
 *  player must exist (GET /players/{id}) and the token must be known (a token the service does not know is 401 on any
 *  route that reads it; GET /games/{an id no game has} reads it, then answers 404). */
export async function signIn(key) {
  const m = /^\s*(p_[0-9a-f]+)\s*[:\s]\s*(\S+)\s*$/.exec(key || "");
  if (!m) throw new Error("A saved key looks like p_0123abcd…:fpt_…  (player id, a colon, the token)");
  const [, playerId, token] = m;
  let info;
  try { info = await get(`/players/${playerId}`); }
  catch (e) { if (e.status === 404) throw new Error(`No player has the id ${playerId}`); throw e; }
  try { await get("/games/g_0000000000000000", token); }
  catch (e) {
    if (e.status === 401) throw new Error("The service does not know this token");
    if (e.status !== 404) throw e;
  }
  const p = { player_id: playerId, name: info.name, token };
  setPlayer(p);
  return p;
}
export const savedKey = (p) => `${p.player_id}:${p.token}`;

export async function register(name) {
  const p = await post("/players", { name });
  setPlayer(p);
  return p;
}

/** Take a seat: with the player's token if registered, else as a guest called `name`; with a client seed of this
 *  browser's own (docs/rng.md) and, where WebCrypto can make one, this browser's own key (signing.js), both kept with
 *  the game's evidence (storage.js): the seat is keyed, and every command from it signed. */
export async function join(gameId, name) {
  const p = player();
  const clientSeed = clientSeedFor(gameId);  // the same one if this join is tried again
  const key = await ownKey();
  const body = p ? { client_seed: clientSeed } : { name: name || "Guest", client_seed: clientSeed };
  if (key) body.public_key = key.public_key;
  const answer = await post(`/games/${gameId}/seats`, body, p ? p.token : undefined);
  rememberSeat(gameId, answer.token || (p && p.token));
  rememberClientSeed(gameId, answer.seat, clientSeed, key ? key.public_key : null);
  return answer;
}

export const addBot = (gameId, bot) => post(`/games/${gameId}/seats`, { bot });
export const view = (gameId, token) => get(`/games/${gameId}`, token);
/** A command sent at `version`: signed by the player's own key when the seat is keyed (signing.js). */
export const send = async (gameId, command, version, token) =>
  post(`/games/${gameId}/commands`, await signed(gameId, command, version), token);
export const stats = (playerId) => get(`/players/${playerId}/stats`);
export const scores = (gameId) => get(`/games/${gameId}/scores`);
export const replay = (gameId, at) => get(`/games/${gameId}/replay?at=${at}`);
export const audit = (gameId, token) => call("GET", `/games/${gameId}/audit`, { token, text: true });
