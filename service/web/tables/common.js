// Small DOM helpers shared by the table modules.

/** h("div.cls#id", {attr: v, onclick: f}, ...children) → an element. */
export function h(tag, attrs = {}, ...children) {
  const [name, ...rest] = tag.split(/(?=[.#])/);
  const el = document.createElement(name || "div");
  for (const part of rest) {
    if (part[0] === ".") el.classList.add(part.slice(1));
    else el.id = part.slice(1);
  }
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Buttons for commands, one per command, grouped by type (a long group folds away). */
export function commandButtons(commands, label, onSend, { fold = 6 } = {}) {
  const groups = new Map();
  for (const c of commands) {
    if (!groups.has(c.type)) groups.set(c.type, []);
    groups.get(c.type).push(c);
  }
  const out = h("div.commands");
  for (const [type, list] of groups) {
    const buttons = list.map((c) =>
      h("button.cmd", { type: "button", dataset: { type, command: JSON.stringify(c) }, onclick: () => onSend(c) }, label(c)));
    if (list.length > fold) {
      out.append(h("details.group", {}, h("summary", {}, `${label({ type })} (${list.length} ways)`), h("div.buttons", {}, buttons)));
    } else {
      out.append(h("div.group.buttons", {}, buttons));
    }
  }
  return out;
}

/** A seat's bot marker: a server bot's kind ("bot: greedy"), or "bot" for a bot account — a program playing through
 *  the API, registered with `account: "bot"` (docs/bots.md); nothing for a person. */
export function botTag(p) {
  if (p.bot) return h("span.tag", {}, `bot: ${p.bot}`);
  return p.account === "bot" ? h("span.tag.bot-account", { title: "a bot account: a program playing through the API" }, "bot") : null;
}

/** A count and its noun, singular or plural: count(1, "receipt") → "1 receipt", count(2, "house") → "2 houses". */
export function count(n, word, plural = `${word}s`) {
  return `${n} ${n === 1 ? word : plural}`;
}

export function humanize(type) {
  return type.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
}

/** A selector that finds `el` again in a re-rendered table: its id, else its data-* attributes (all of them, then
 *  the ones that name a place or a command type alone), else its name; the candidates are tried in order. */
export function focusKeys(el) {
  if (!el || !(el instanceof Element)) return [];
  const tag = el.tagName.toLowerCase();
  const keys = [];
  if (el.id) keys.push(`#${CSS.escape(el.id)}`);
  const attr = (k) => `[data-${k.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase())}="${CSS.escape(el.dataset[k])}"]`;
  const data = Object.keys(el.dataset);
  if (data.length) keys.push(tag + data.map(attr).join(""));
  for (const group of [["row", "slot"], ["square"], ["seat"], ["type"]]) {
    if (group.every((k) => k in el.dataset)) keys.push(tag + group.map(attr).join(""));
  }
  if (el.name) keys.push(`${tag}[name="${CSS.escape(el.name)}"]`);
  return keys;
}

/** After a re-render: focus the first element one of `keys` finds in `root` (enabled), else `root` itself. */
export function restoreFocus(root, keys) {
  if (!keys.length || root.contains(document.activeElement)) return;
  for (const key of keys) {
    const found = [...root.querySelectorAll(key)].find((el) => !el.disabled && !el.closest("[hidden]"));
    if (found) { found.focus({ preventScroll: true }); return; }
  }
  if (!root.hasAttribute("tabindex")) root.setAttribute("tabindex", "-1");
  root.focus({ preventScroll: true });
}

/** 83 456 ms → "1:23"; an hour or more → "1:02:03". */
export function clockText(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  const hms = [Math.floor(s / 3600), Math.floor(s / 60) % 60, s % 60];
  const pad = (n) => String(n).padStart(2, "0");
  return hms[0] ? `${hms[0]}:${pad(hms[1])}:${pad(hms[2])}` : `${hms[1]}:${pad(hms[2])}`;
}
