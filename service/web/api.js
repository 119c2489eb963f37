// The public HTTP API (../shared/API.md) through fetch, and the tokens this browser keeps in localStorage.
import { clientSeedFor, rememberClientSeed } from "./evidence.js";

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

export async function call(method, path, { body, token, text = false } = {}) {
  const headers = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (token) headers.authorization = `Bearer ${token}`;
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!r.ok) {
    let data = null;
    try { data = await r.json(); } catch { /* not JSON */ }
    throw new ApiError(r.status, data);
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

export async function register(name) {
  const p = await post("/players", { name });
  setPlayer(p);
  return p;
}

/** Take a seat: with the player's token if registered, else as a guest called `name`; with a client seed of this
 *  browser's own (docs/rng.md), kept with the game's evidence (evidence.js). */
export async function join(gameId, name) {
  const p = player();
  const clientSeed = clientSeedFor(gameId);  // the same one if this join is tried again
  const body = p ? { client_seed: clientSeed } : { name: name || "Guest", client_seed: clientSeed };
  const answer = await post(`/games/${gameId}/seats`, body, p ? p.token : undefined);
  rememberSeat(gameId, answer.token || (p && p.token));
  rememberClientSeed(gameId, answer.seat, clientSeed);
  return answer;
}

export const addBot = (gameId, bot) => post(`/games/${gameId}/seats`, { bot });
export const view = (gameId, token) => get(`/games/${gameId}`, token);
export const send = (gameId, command, version, token) =>
  post(`/games/${gameId}/commands`, { ...command, expected_version: version }, token);
export const replay = (gameId, at) => get(`/games/${gameId}/replay?at=${at}`);
export const audit = (gameId, token) => call("GET", `/games/${gameId}/audit`, { token, text: true });
