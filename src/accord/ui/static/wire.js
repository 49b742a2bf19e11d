// accord UI: the wire view: each frame and decoded event of a turn, secrets masked.
"use strict";

// The values this page typed in masked fields, by turn: in its memory only (gone on reload),
// never in the state the UI's server keeps or sends; the wire view reveals them on demand.
const typedSecrets = new Map();
const revealed = new Set(); // the entries shown with their secrets, by turn and number

function rememberSecrets(turn, values) {
  const typed = values.filter((value) => typeof value === "string" && value.trim());
  if (!typed.length) return;
  typedSecrets.set(turn, typed);
  pages[PAGE].render(); // the turn's frames may have come before the answer that names it
}

function renderEntry(entry) {
  const text = entry.kind === "event" ? pretty(entry.text) : entry.text;
  const raw = h("pre", { class: "raw" });
  const secrets = text.includes(HIDDEN) ? typedSecrets.get(entry.turn) : undefined;
  const key = `${entry.turn}/${entry.n}`;
  const show = () => raw.replaceChildren(...(revealed.has(key) ? [unmasked(text, secrets)] : shown(text)));
  show();
  const reveal = secrets ? h("button", { type: "button", class: "plain reveal", "aria-pressed": String(revealed.has(key)),
    "aria-label": "Reveal the secret typed" }, "reveal") : null;
  if (reveal) {
    reveal.addEventListener("click", () => {
      if (revealed.has(key)) revealed.delete(key); else revealed.add(key);
      reveal.setAttribute("aria-pressed", String(revealed.has(key)));
      show();
    });
  }
  return h("li", { "data-kind": entry.kind },
    h("div", { class: "row" }, h("span", { class: `kind ${entry.kind}` }, entry.kind),
      h("span", { class: "muted" }, time(entry.at)), h("span", {}, shown(entry.title)), reveal),
    h("details", { open: entry.kind !== "request" && entry.kind !== "response" ? null : true },
      h("summary", { class: "muted" }, entry.kind === "event" ? "decoded event" : "raw"), raw));
}

// The masks of `text` given back their values, in the order they were typed (the order they
// go on the wire).
function unmasked(text, secrets) {
  return text.split(HIDDEN).map((piece, index) => (index ? secrets[(index - 1) % secrets.length] : "") + piece).join("");
}
