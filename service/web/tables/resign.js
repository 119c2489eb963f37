// "Resign" at a card-game or Monopoly table (docs/rules-free-parking.md, docs/rules-monopoly.md, "Resigning"): a button
// of its own, apart from "Your moves", that asks first — an in-page confirm step, as the solitaire's — and only then
// sends the `resign` the view's `legal` lists (any moment the seat is still in, on turn or not). Nothing is sent on
// "Keep playing". The step stays open across new versions of the table while `resign` is still legal.
import { h } from "./common.js";

/** The resign control for `view` (null when `legal` has no `resign`, or the table is read only); `consequence`: what
 *  resigning does in this game, in words; `redraw`: re-render the table (the step opened or closed). */
export function resignEl(view, ctx, redraw, consequence) {
  const c = ctx.readonly ? null : (view.legal || []).find((x) => x.type === "resign");
  const st = ctx.state;
  if (!c) { st.resignAsk = false; return null; }
  if (!st.resignAsk) {
    return h("div.resign", {}, h("button#resign", { type: "button", dataset: { type: "resign" },
      onclick: () => { st.resignAsk = true; redraw(); document.querySelector("#resign-yes")?.focus(); } }, "Resign…"));
  }
  return h("section.confirm#resign-confirm", { role: "alertdialog", "aria-label": "confirm resigning" },
    h("p", {}, `Resign this game? ${consequence} A resignation cannot be undone.`),
    h("button#resign-yes", { type: "button", onclick: () => { st.resignAsk = false; ctx.send(c); } }, "Yes, resign"),
    " ", h("button#resign-no", { type: "button", onclick: () => { st.resignAsk = false; redraw(); } }, "Keep playing"));
}
