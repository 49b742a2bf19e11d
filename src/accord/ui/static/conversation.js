// accord UI: a conversation's items, answering in place, cancel, attachments, credentials.
"use strict";

function lastTurnOfTask(conversation, taskId) {
  // A cancel the agent refused, or has not answered yet, leaves the task as the turn before
  // it left it (whose answer being written stays as it is).
  const turns = conversation.items.filter((item) => item.turn && item.task === taskId && !(item.cancel && (item.error || !item.done)));
  return turns.length ? turns[turns.length - 1].turn : null;
}

function renderItem(conversation, item) {
  if (item.role === "user") {
    return h("div", { class: "bubble user" }, h("div", { class: "who" }, "you"),
      item.cancel ? h("div", { class: "text" }, `Cancel task ${shortId(item.cancel)}`)
        : renderParts(item.message.parts, {}));
  }
  const task = item.task && S.tasks[item.task];
  const state = task ? task.state : null;
  const bubble = h("div", { class: "bubble agent", "data-turn": item.turn });
  const latest = lastTurnOfTask(conversation, item.task) === item.turn;
  // A question answered since (the task moved on) no longer shows it waits.
  const badge = item.status && (latest || !INTERRUPTED.includes(item.status.state)) ? stateBadge(item.status.state) : null;
  bubble.append(h("div", { class: "who" }, agentName(conversation.agent),
    item.task ? h("a", { href: `/tasks/${encodeURIComponent(item.task)}` }, "task") : null, badge));
  const waiting = task && INTERRUPTED.includes(state) && latest;
  if (waiting) bubble.dataset.asks = JSON.stringify([state, item.status]); // the answer it waits for
  const answer = waiting ? (reply) => sendMessage(conversation.agent, conversation.id, { ...reply, taskId: item.task }) : null;
  if (item.message) bubble.append(...renderParts(item.message.parts, {}));
  if (item.status && item.status.message) bubble.append(...renderParts(item.status.message.parts, { answer }));
  for (const artifactId of item.artifacts || []) {
    const artifact = task && (task.task.artifacts || []).find((a) => a.artifactId === artifactId);
    if (artifact) bubble.append(renderArtifact(artifact));
  }
  const hasForm = item.status && item.status.message &&
    item.status.message.parts.some((p) => p.kind === "data" && p.data && p.data.type === "form");
  const needed = item.status && item.status.message &&
    item.status.message.parts.find((p) => p.kind === "data" && p.data && typeof p.data.field === "string");
  if (waiting && !hasForm) bubble.append(renderReply(state, answer, needed && needed.data.field));
  if (task && ACTIVE.includes(state) && latest) {
    // A refusal shows in the cancel's own turn, so there is nothing more to say here.
    bubble.append(h("div", {}, cancelButton(conversation.agent, item.task, () => {})));
  }
  if (!item.done && !item.status && !item.message && !item.error) bubble.append(h("div", { class: "muted" }, "…"));
  if (item.error) bubble.append(h("div", { class: "error" }, shown(item.error)));
  return bubble;
}

function renderReply(state, answer, field) {
  const secret = state === "auth-required";
  const label = secret ? "The credential it asks for" : "Your answer";
  const input = secret ? h("input", { class: "grow", name: "reply", type: "password", autocomplete: "off", placeholder: label, "aria-label": label })
    : h("textarea", { class: "grow", name: "reply", rows: 1, placeholder: label, "aria-label": label });
  const attachment = secret ? noAttachment : attachControl(); // a credential goes alone
  const error = h("div", { class: "error", role: "alert" });
  const form = h("form", { class: "answer", "data-answering": true }, h("div", { class: "row" }, secret ? maskedField(input) : input,
    secret ? null : attachment.el, h("button", { type: "submit" }, secret ? "Send credential" : "Answer")), error);
  if (!secret) sendsOnEnter(input, form);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!input.value.trim() && !attachment.chosen()) return;
    // An agent naming the field it wants the credential in gets it as data, else as text.
    // Marked secret: the UI's server shows it nowhere (conversation, wire, events).
    const reply = !secret ? { text: input.value } : field ? { text: "", data: { [field]: input.value }, secretFields: [field] }
      : { text: input.value, secret: true };
    answerWith(attachment, error, (file) => answer({ ...reply, file }));
  });
  return form;
}

// Enter sends the form of a message box; Shift+Enter starts a new line, and the box grows with
// its lines (up to the height the style sheet allows).
function sendsOnEnter(box, form) {
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  box.addEventListener("input", () => {
    box.style.height = "auto";
    box.style.height = `${box.scrollHeight + 2}px`;
  });
}

function renderItems(container, conversation) {
  // Replace only the items whose content changed: an open form keeps what was typed in it.
  const focused = document.activeElement;
  const known = new Map([...container.children].map((el) => [el.dataset.key, el]));
  const wanted = conversation.items.map((item, index) => {
    const task = item.task && S.tasks[item.task];
    const last = item.task ? lastTurnOfTask(conversation, item.task) : null;
    const signature = JSON.stringify([item, task && task.task.artifacts, task && task.state, last]);
    const key = item.turn || `u${index}`;
    const existing = known.get(key);
    if (existing && existing.dataset.signature === signature) return existing;
    const el = renderItem(conversation, item);
    if (existing) keepAnswers(existing, el);
    el.dataset.key = key;
    el.dataset.signature = signature;
    return el;
  });
  wanted.forEach((el, index) => {
    if (container.children[index] !== el) container.insertBefore(el, container.children[index] || null);
  });
  while (container.children.length > wanted.length) container.lastChild.remove();
  // A field moved in the page loses the focus: the one being typed in gets it back.
  if (focused !== document.activeElement && container.contains(focused)) focused.focus({ preventScroll: true });
}

// An answer being written survives a redraw of its turn while the turn waits for the same
// answer: the new drawing takes the old one's forms, with what was typed and the file chosen.
function keepAnswers(old, el) {
  if (!el.dataset.asks || el.dataset.asks !== old.dataset.asks) return;
  const kept = old.querySelectorAll("form[data-answering]");
  el.querySelectorAll("form[data-answering]").forEach((form, index) => kept[index] && form.replaceWith(kept[index]));
}

function traceLink(traceId) {
  // The trace its first turn's requests named (traceparent); linked when the UI knows a trace viewer.
  const shown = [" · trace ", h("code", {}, traceId)];
  if (!S.traceUrl) return h("span", { id: "task-trace" }, ...shown);
  const href = S.traceUrl.replace("{trace_id}", encodeURIComponent(traceId));
  return h("a", { id: "task-trace", href, target: "_blank", rel: "noopener noreferrer" }, ...shown);
}

function cancelButton(agent, taskId, failed, done) {
  const button = h("button", { type: "button", class: "plain cancel" }, "Cancel task");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const result = await api("POST", "/api/cancel", { agent, task: taskId });
      if (done) done(result.task);
    } catch (error) { failed(error.message); }
    button.disabled = false;
  });
  return button;
}

// Send a message (a new conversation unless one is named); its conversation's id. The values of
// secret fields are kept in this page's memory only, for the wire view to reveal on demand.
async function sendMessage(agent, conversationId, body) {
  const result = await api("POST", "/api/send", { agent, conversation: conversationId, ...body });
  const data = body.data || {};
  rememberSecrets(result.turn, [...(body.secret ? [body.text] : []),
    ...(body.secretFields || []).map((name) => data[name]), ...(body.secret ? Object.values(data) : [])]);
  return result.conversation;
}

// The *Attach a file* control of the composer, the reply box and forms: one file, the UI's limit.
function attachControl(name) {
  const input = h("input", { type: "file", name });
  return {
    el: h("label", { class: "attach muted" }, `Attach a file (up to ${size(MAX_FILE_BYTES)}) `, input),
    chosen() { return input.files[0]; },
    // The chosen file as the UI's API takes it (undefined: none); refused in words when too large.
    async read() {
      const chosen = input.files[0];
      if (!chosen) return undefined;
      if (chosen.size > MAX_FILE_BYTES) {
        throw new Error(`${chosen.name} is ${size(chosen.size)}; the UI sends files up to ${size(MAX_FILE_BYTES)}.`);
      }
      return readFile(chosen);
    },
    clear() { input.value = ""; },
  };
}

const noAttachment = { chosen() {}, async read() {}, clear() {} };

// Send an answer with the attachment's file: what goes wrong is said in `error`, and what was
// typed and chosen stays for another try.
async function answerWith(attachment, error, send) {
  error.textContent = "";
  try {
    await send(await attachment.read());
    attachment.clear();
  } catch (problem) { error.textContent = `Not sent: ${problem.message}`; }
}

// A file chosen in the page, as the UI's API takes it: its name, media type and bytes in base64.
function readFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve({ name: file.name, mimeType: file.type || "application/octet-stream",
      bytes: String(reader.result).split(",", 2)[1] || "" });
    reader.onerror = () => reject(new Error(`${file.name} could not be read`));
    reader.readAsDataURL(file);
  });
}

// Credentials for an agent: kept by the UI's server (in memory) and presented as its card asks.
function credentialFields() {
  const kind = h("select", { name: "credential-kind", "aria-label": "Credentials" },
    h("option", { value: "" }, "no credentials"), h("option", { value: "apiKey" }, "API key"),
    h("option", { value: "bearer" }, "bearer token"), h("option", { value: "basic" }, "user and password"));
  const user = h("input", { name: "credential-user", placeholder: "user", autocomplete: "off", hidden: true, "aria-label": "User" });
  const secret = h("input", { name: "credential-secret", type: "password", placeholder: "secret", autocomplete: "off", hidden: true, "aria-label": "Secret" });
  kind.addEventListener("change", () => { user.hidden = kind.value !== "basic"; secret.hidden = !kind.value; });
  return {
    el: h("span", { class: "row credentials" }, kind, user, secret),
    // undefined: keep what the agent was given before
    value() {
      if (!kind.value || !secret.value) return undefined;
      return { [kind.value]: kind.value === "basic" ? `${user.value}:${secret.value}` : secret.value };
    },
    clear() { secret.value = ""; user.value = ""; },
  };
}
