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

export function humanize(type) {
  return type.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
}
