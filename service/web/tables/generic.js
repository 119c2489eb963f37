// The fallback table for a kind with no module of its own: the view as JSON and its legal commands as buttons.
import { h, commandButtons, humanize } from "./common.js";

export default {
  kind: "*",
  title: "Game",
  bots: ["random"],
  seats: { min: 1, max: 8, default: 2 },
  render(root, view, ctx) {
    root.replaceChildren(
      ctx.readonly ? "" : commandButtons(view.legal || [], (c) => humanize(c.type) + (Object.keys(c).length > 1 ? " " + JSON.stringify(c) : ""), ctx.send),
      h("pre.json", {}, JSON.stringify(view, null, 2)),
    );
  },
};
