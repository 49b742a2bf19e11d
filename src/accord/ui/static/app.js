// accord UI: renders the server's state and follows its changes on one EventSource.
"use strict";

const S = { agents: {}, conversations: {}, tasks: {}, timeline: [] };
const PAGE = document.body.dataset.page;
const PARAMS = new URLSearchParams(location.search);
const TASK_ID = PAGE === "task" ? decodeURIComponent(location.pathname.split("/").pop()) : null;
const INTERRUPTED = ["input-required", "auth-required"];
const ACTIVE = ["submitted", "working", ...INTERRUPTED]; // not terminal: may be canceled
const MAX_FILE_BYTES = Number(document.body.dataset.maxFileBytes);
const SESSION = document.body.dataset.session; // the UI's API answers only requests carrying it
const main = document.getElementById("main");

// --- small helpers ---------------------------------------------------------------------------

function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) el.addEventListener(name.slice(2), value);
    else if (name === "text") el.textContent = value;
    else el.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) {
      el.append(child instanceof Node ? child : String(child));
    }
  }
  return el;
}

async function api(method, path, body) {
  const response = await fetch(path, {
    method, headers: { "Content-Type": "application/json", "X-Accord-Session": SESSION },
    body: body && JSON.stringify(body),
  });
  const data = response.status === 204 ? {} : await response.json();
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

// Links and images from agents: web and inline data only (never `javascript:`).
const safeUrl = (url) => (/^(https?:|data:)/i.test(String(url)) ? url : "#");
const agentName = (url) => (S.agents[url] && S.agents[url].name) || url;
const stateBadge = (state) => h("span", { class: `state ${state}`, "data-state": state }, state);
const time = (seconds) => new Date(seconds * 1000).toLocaleTimeString();
// Ids shortened to their end: ids of version 7 begin with the time, alike for ids made together.
const shortId = (id) => (id.length > 12 ? `…${id.slice(-8)}` : id);
const when = (timestamp) => (timestamp ? new Date(timestamp).toLocaleString() : "—");
const size = (bytes) => (bytes < 1024 ? `${bytes} B` : bytes < 1048576 ? `${(bytes / 1024).toFixed(1)} KiB`
  : `${(bytes / 1048576).toFixed(1)} MiB`);
const pretty = (text) => { try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; } };

// --- parts, artifacts, forms -----------------------------------------------------------------

function renderParts(parts, ctx) {
  return (parts || []).map((part) => renderPart(part, ctx));
}

function renderPart(part, ctx) {
  if (part.kind === "text") return h("div", { class: "text" }, part.text);
  if (part.kind === "file") return renderFile(part.file);
  if (part.kind === "data") {
    const data = part.data || {};
    if (data.type === "form" && data.form && data.form.properties) return renderForm(data, ctx);
    return h("pre", { class: "data" }, JSON.stringify(data, null, 2));
  }
  return h("pre", {}, JSON.stringify(part, null, 2));
}

function renderFile(file) {
  const mime = file.mimeType || "application/octet-stream";
  if (file.size !== undefined && !file.bytes && !file.uri) { // a file the user sent, shown without its bytes
    return h("div", { class: "file attached" }, `Attached ${file.name || "a file"} (${mime}, ${size(file.size)})`);
  }
  const href = file.bytes ? `data:${mime};base64,${file.bytes}` : safeUrl(file.uri);
  const name = file.name || "file";
  const link = h("a", { href, download: name, class: "download" }, `Download ${name}`);
  if (mime.startsWith("image/")) {
    return h("div", { class: "file" }, h("img", { class: "inline", src: href, alt: name }), link);
  }
  return h("div", { class: "file" }, link, h("span", { class: "muted" }, ` (${mime})`));
}

function renderArtifact(artifact) {
  const parts = artifact.parts || [];
  const name = artifact.name || artifact.artifactId;
  const box = h("div", { class: "artifact", "data-artifact": name }, h("div", { class: "name" }, name));
  if (parts.length && parts.every((p) => p.kind === "text")) {
    const text = parts.map((p) => p.text).join("");
    const mime = (artifact.metadata && artifact.metadata.mimeType) || "text/plain";
    const href = `data:${mime};charset=utf-8,${encodeURIComponent(text)}`;
    box.append(h("pre", { class: "file-text" }, text),
      h("a", { href, download: name.split("/").pop(), class: "download" }, `Download ${name}`));
  } else {
    // The same file twice (inline bytes and a URL, as the image sample sends): shown once.
    const shown = new Set();
    for (const part of parts) {
      const name = part.kind === "file" && part.file.name;
      if (name && shown.has(name) && part.file.uri) {
        box.append(h("div", { class: "muted" }, "also at ", h("a", { href: safeUrl(part.file.uri), class: "file-url" }, part.file.uri)));
      } else {
        box.append(renderPart(part, {}));
      }
      if (name) shown.add(name);
    }
  }
  return box;
}

function renderForm(data, ctx) {
  const schema = data.form;
  const values = data.formData || {};
  const errors = data.errors || {};
  const required = new Set(schema.required || []);
  const form = h("form", { class: "a2a-form", novalidate: true },
    schema.title ? h("strong", {}, schema.title) : null);
  for (const [name, field] of Object.entries(schema.properties)) {
    let input;
    const value = values[name] === undefined ? "" : String(values[name]);
    if (Array.isArray(field.enum)) {
      input = h("select", { name }, h("option", { value: "" }, "—"),
        field.enum.map((option) => h("option", { value: option, selected: option === value }, option)));
    } else {
      const type = field.type === "number" || field.type === "integer" ? "number"
        : field.format === "date" ? "date" : "text";
      input = h("input", { name, type, value, step: type === "number" ? "any" : null });
    }
    input.disabled = !ctx.answer;
    input.dataset.type = field.type;
    form.append(h("label", {},
      h("span", {}, (field.title || name) + (required.has(name) ? " *" : "")),
      input,
      field.description ? h("span", { class: "hint" }, field.description) : null,
      errors[name] ? h("span", { class: "field-error", "data-field": name }, `${field.title || name} ${errors[name]}`) : null));
  }
  if (ctx.answer) {
    const attachment = attachControl();
    const error = h("div", { class: "error" });
    form.append(h("div", { class: "row" }, attachment.el, h("button", { type: "submit" }, "Submit")), error);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const submitted = {};
      for (const input of form.querySelectorAll("[data-type]")) {
        if (input.value === "") continue;
        const number = Number(input.value);
        submitted[input.name] = input.dataset.type === "number" && !Number.isNaN(number) ? number : input.value;
      }
      answerWith(attachment, error, (file) => ctx.answer({ text: "", data: submitted, file }));
    });
  }
  return form;
}

// --- conversations ---------------------------------------------------------------------------

function lastTurnOfTask(conversation, taskId) {
  // A cancel the agent refused leaves the task as the turn before it left it.
  const turns = conversation.items.filter((item) => item.turn && item.task === taskId && !(item.cancel && item.error));
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
  bubble.append(h("div", { class: "who" }, agentName(conversation.agent),
    item.task ? h("a", { href: `/tasks/${encodeURIComponent(item.task)}` }, "task") : null,
    item.status ? stateBadge(item.status.state) : null));
  const waiting = task && INTERRUPTED.includes(state) && lastTurnOfTask(conversation, item.task) === item.turn;
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
  if (task && ACTIVE.includes(state) && lastTurnOfTask(conversation, item.task) === item.turn) {
    // A refusal shows in the cancel's own turn, so there is nothing more to say here.
    bubble.append(h("div", {}, cancelButton(conversation.agent, item.task, () => {})));
  }
  if (!item.done && !item.status && !item.message && !item.error) bubble.append(h("div", { class: "muted" }, "…"));
  if (item.error) bubble.append(h("div", { class: "error" }, item.error));
  return bubble;
}

function renderReply(state, answer, field) {
  const secret = state === "auth-required";
  const input = h("input", { class: "grow", name: "reply", type: secret ? "password" : "text",
    placeholder: secret ? "The credential it asks for" : "Your answer" });
  const attachment = secret ? null : attachControl(); // a credential goes alone
  const error = h("div", { class: "error" });
  const form = h("form", { class: "answer" }, h("div", { class: "row" }, input, attachment && attachment.el,
    h("button", { type: "submit" }, secret ? "Send credential" : "Answer")), error);
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (secret) {
      // An agent naming the field it wants the credential in gets it as data, else as text.
      // Marked secret: the UI's server shows it nowhere (conversation, wire, events).
      if (input.value.trim()) {
        answer(field ? { text: "", data: { [field]: input.value }, secret: true } : { text: input.value, secret: true });
      }
      return;
    }
    if (!input.value.trim() && !attachment.chosen()) return;
    answerWith(attachment, error, (file) => answer({ text: input.value, file }));
  });
  return form;
}

function renderItems(container, conversation) {
  // Replace only the items whose content changed: an open form keeps what was typed in it.
  const known = new Map([...container.children].map((el) => [el.dataset.key, el]));
  const wanted = conversation.items.map((item, index) => {
    const task = item.task && S.tasks[item.task];
    const last = item.task ? lastTurnOfTask(conversation, item.task) : null;
    const signature = JSON.stringify([item, task && task.task.artifacts, task && task.state, last]);
    const key = item.turn || `u${index}`;
    const existing = known.get(key);
    if (existing && existing.dataset.signature === signature) return existing;
    const el = renderItem(conversation, item);
    el.dataset.key = key;
    el.dataset.signature = signature;
    return el;
  });
  wanted.forEach((el, index) => {
    if (container.children[index] !== el) container.insertBefore(el, container.children[index] || null);
  });
  while (container.children.length > wanted.length) container.lastChild.remove();
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

async function sendMessage(agent, conversationId, body) {
  const result = await api("POST", "/api/send", { agent, conversation: conversationId, ...body });
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

// Send an answer with the attachment's file: what goes wrong is said in `error`.
async function answerWith(attachment, error, send) {
  error.textContent = "";
  try {
    const file = await attachment.read();
    attachment.clear();
    await send(file);
  } catch (problem) { error.textContent = problem.message; }
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
  const kind = h("select", { name: "credential-kind", "aria-label": "credentials" },
    h("option", { value: "" }, "no credentials"), h("option", { value: "apiKey" }, "API key"),
    h("option", { value: "bearer" }, "bearer token"), h("option", { value: "basic" }, "user and password"));
  const user = h("input", { name: "credential-user", placeholder: "user", autocomplete: "off", hidden: true });
  const secret = h("input", { name: "credential-secret", type: "password", placeholder: "secret", autocomplete: "off", hidden: true });
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

// --- pages -----------------------------------------------------------------------------------

const pages = {};

pages.chat = {
  current: PARAMS.get("c"),
  agent: PARAMS.get("agent"),
  build() {
    this.list = h("div", { class: "conversations" });
    this.select = h("select", { name: "agent", class: "grow" });
    this.select.addEventListener("change", () => { this.agent = this.select.value; this.open(null); });
    this.items = h("div", { class: "items", id: "items" });
    this.input = h("input", { class: "grow", name: "message", placeholder: "Message", autocomplete: "off", "aria-label": "Message" });
    this.attachment = attachControl("file");
    this.error = h("div", { class: "error", id: "composer-error" });
    const composer = h("form", { class: "composer" }, this.input, this.attachment.el, h("button", { type: "submit" }, "Send"));
    composer.addEventListener("submit", (event) => { event.preventDefault(); this.send(); });
    main.append(h("div", { class: "chat" },
      h("aside", { class: "sidebar" }, h("div", { class: "row" }, this.select),
        h("p", {}, h("button", { class: "plain", onclick: () => this.open(null) }, "New conversation")), this.list),
      h("section", {}, h("h1", { id: "title" }, "Conversation"), this.items, this.error, composer)));
  },
  open(id) {
    this.current = id;
    const url = new URL(location.href);
    if (id) url.searchParams.set("c", id); else url.searchParams.delete("c");
    history.replaceState(null, "", url);
    this.items.replaceChildren();
    this.render();
  },
  async send() {
    const text = this.input.value.trim();
    if (!text && !this.attachment.chosen()) return;
    const conversation = this.current && S.conversations[this.current];
    const agent = conversation ? conversation.agent : this.select.value;
    if (!agent) { this.error.textContent = "Add an agent first (Agents page)."; return; }
    this.error.textContent = "";
    try {
      const file = await this.attachment.read();
      this.input.value = "";
      this.attachment.clear();
      const id = await sendMessage(agent, this.current, { text, file });
      if (id !== this.current) this.open(id);
    } catch (error) { this.error.textContent = error.message; }
  },
  render() {
    const agents = Object.values(S.agents);
    const conversation = this.current && S.conversations[this.current];
    const chosen = conversation ? conversation.agent : this.agent || this.select.value || (agents[0] && agents[0].url);
    this.select.replaceChildren(...agents.map((a) => h("option", { value: a.url, selected: a.url === chosen }, a.name)));
    this.select.disabled = Boolean(conversation);
    this.list.replaceChildren(...Object.values(S.conversations).filter((c) => !c.transport && !c.version).reverse().map((c) => {
      const first = c.items.find((item) => item.role === "user");
      const text = first ? first.message.parts.map((p) => p.text || "").join(" ") : "";
      return h("a", { href: `/?c=${c.id}`, class: c.id === this.current ? "current" : null,
        onclick: (event) => { event.preventDefault(); this.open(c.id); } },
        h("div", {}, agentName(c.agent)), h("div", { class: "muted" }, text.slice(0, 60)));
    }));
    document.getElementById("title").textContent = conversation ? `With ${agentName(conversation.agent)}`
      : chosen ? `New conversation with ${agentName(chosen)}` : "Add an agent to start";
    if (conversation) renderItems(this.items, conversation);
  },
};

pages.tasks = {
  build() {
    this.body = h("tbody", { id: "tasks" });
    this.agent = h("select", { name: "list-agent", "aria-label": "agent whose tasks to list" });
    this.agent.addEventListener("change", () => this.list());
    this.note = h("div", { id: "agent-tasks-note" });
    this.listed = h("tbody", { id: "agent-tasks" });
    this.more = h("button", { type: "button", class: "plain", hidden: true, onclick: () => this.list(this.next) }, "More tasks");
    main.append(h("h1", {}, "Tasks"), h("h2", {}, "Started here"), h("table", {},
      h("thead", {}, h("tr", {}, h("th", {}, "Task"), h("th", {}, "Agent"), h("th", {}, "State"),
        h("th", {}, "Last message"), h("th", {}, "Updated"))), this.body),
      h("h2", {}, "Kept by the agent"),
      h("div", { class: "row" }, this.agent, h("button", { type: "button", onclick: () => this.list() }, "List tasks")),
      this.note, h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "Task"), h("th", {}, "Context"),
        h("th", {}, "State"), h("th", {}, "Last message"), h("th", {}, "Updated"))), this.listed), this.more);
  },
  // The agent's own tasks (A2A 1.0 ListTasks), for the credentials the UI was given.
  async list(pageToken) {
    const agent = this.agent.value;
    if (!agent) return;
    if (!pageToken) this.listed.replaceChildren();
    this.note.replaceChildren(h("div", { class: "muted" }, `Asking ${agentName(agent)} for its tasks…`));
    let result;
    try {
      result = await api("GET", `/api/agent-tasks?agent=${encodeURIComponent(agent)}` +
        (pageToken ? `&pageToken=${encodeURIComponent(pageToken)}` : ""));
    } catch (error) {
      this.note.replaceChildren(h("div", { class: "banner bad" }, error.message));
      return;
    }
    if (result.unsupported) {
      this.note.replaceChildren(h("div", { class: "banner", "data-unsupported": true },
        `${agentName(agent)} does not list its tasks (${result.unsupported}); the tasks above are the ones this UI started.`));
      this.more.hidden = true;
      return;
    }
    this.note.replaceChildren();
    this.next = result.nextPageToken;
    this.more.hidden = !this.next;
    this.listed.append(...result.tasks.map((t) => h("tr", { "data-agent-task": t.id },
      h("td", {}, h("a", { href: `/tasks/${encodeURIComponent(t.id)}?agent=${encodeURIComponent(agent)}` }, shortId(t.id))),
      h("td", { class: "muted" }, shortId(t.contextId)), h("td", {}, stateBadge(t.state)),
      h("td", {}, t.text.slice(0, 120)), h("td", {}, when(t.timestamp)))));
    if (!this.listed.children.length) this.listed.append(h("tr", {}, h("td", { colspan: 5, class: "muted" }, "The agent keeps no tasks for this UI.")));
  },
  render() {
    const tasks = Object.values(S.tasks).sort((a, b) => b.updated - a.updated);
    this.body.replaceChildren(...tasks.map((t) => h("tr", { "data-task": t.id },
      h("td", {}, h("a", { href: `/tasks/${encodeURIComponent(t.id)}` }, shortId(t.id))),
      h("td", {}, agentName(t.agent)), h("td", {}, stateBadge(t.state)),
      h("td", {}, t.text.slice(0, 120)), h("td", {}, time(t.updated)))));
    if (!tasks.length) this.body.append(h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No tasks yet: start a conversation.")));
    const agents = Object.values(S.agents);
    const chosen = this.agent.value || PARAMS.get("agent") || (agents[0] && agents[0].url);
    this.agent.replaceChildren(...agents.map((a) => h("option", { value: a.url, selected: a.url === chosen }, a.name)));
    if (!this.asked && this.agent.value) { this.asked = true; this.list(); }
  },
};

pages.task = {
  agent: PARAMS.get("agent"),
  build() {
    this.head = h("div", {});
    this.message = h("div", { id: "task-message" });
    this.history = h("div", { class: "items", id: "history" });
    this.artifacts = h("div", {});
    this.list = h("ol", { class: "timeline", id: "timeline" });
    this.wire = h("div", {}, h("h2", {}, "Timeline: every frame on the wire, every event"), this.list);
    main.append(this.head, this.message, this.history, this.artifacts, this.wire);
  },
  // A task the UI did not start: as the agent has it (GetTask), with its history.
  async fetch() {
    try {
      this.remote = await api("GET", `/api/agent-task?agent=${encodeURIComponent(this.agent)}&id=${encodeURIComponent(TASK_ID)}`);
    } catch (error) { this.failed(error.message); }
    this.render();
  },
  failed(message) {
    this.message.replaceChildren(h("div", { class: "banner bad", id: "task-error" }, message));
  },
  render() {
    const own = S.tasks[TASK_ID];
    const task = own ? own.task : this.remote && this.remote.task;
    if (!task) {
      // A link only names the task and its agent: fetching it (with the UI's credentials) is the user's choice.
      const ask = this.agent && !this.message.children.length ? h("p", {}, h("button", { type: "button", id: "fetch-task",
        onclick: () => this.fetch() }, `Fetch it from ${this.agent}`)) : null;
      this.head.replaceChildren(h("h1", {}, this.agent ? "A task of another agent" : "Unknown task"),
        h("p", { class: "muted" }, TASK_ID), ask);
      return;
    }
    const agent = own ? own.agent : this.agent;
    const state = task.status.state;
    const done = own ? null : (canceled) => { this.message.replaceChildren(); this.remote = { ...this.remote, task: canceled }; this.render(); };
    this.head.replaceChildren(h("h1", {}, "Task ", h("code", {}, task.id), " ", stateBadge(state)),
      h("p", { class: "row muted" }, `${agentName(agent)} · context ${task.contextId} · `,
        own ? h("a", { href: `/?c=${own.conversation}` }, "conversation") : `updated ${when(task.status.timestamp)}`,
        own && own.trace ? traceLink(own.trace) : null,
        own ? null : h("button", { type: "button", class: "plain", onclick: () => this.fetch() }, "Refresh"),
        ACTIVE.includes(state) ? cancelButton(agent, task.id, (message) => this.failed(message), done) : null));
    // The UI's own tasks show their conversation and wire; others their history as the agent keeps it.
    const said = task.status.message;
    const history = own ? [] : [...(task.history || []),
      ...(said && !(task.history || []).some((m) => m.messageId === said.messageId) ? [said] : [])];
    this.history.replaceChildren(...(history.length ? [h("h2", {}, "History")] : []), ...history.map((m) =>
      h("div", { class: `bubble ${m.role === "user" ? "user" : "agent"}` },
        h("div", { class: "who" }, m.role === "user" ? "user" : agentName(agent)), renderParts(m.parts, {}))));
    this.history.hidden = !history.length;
    this.artifacts.replaceChildren(...((task.artifacts || []).length ? [h("h2", {}, "Artifacts")] : []),
      ...(task.artifacts || []).map(renderArtifact));
    this.wire.hidden = !own;
    this.list.replaceChildren(...S.timeline.map(renderEntry));
  },
};

function renderEntry(entry) {
  const text = entry.kind === "event" ? pretty(entry.text) : entry.text;
  return h("li", { "data-kind": entry.kind },
    h("div", { class: "row" }, h("span", { class: `kind ${entry.kind}` }, entry.kind),
      h("span", { class: "muted" }, time(entry.at)), h("span", {}, entry.title)),
    h("details", { open: entry.kind !== "request" && entry.kind !== "response" ? null : true },
      h("summary", { class: "muted" }, entry.kind === "event" ? "decoded event" : "raw"),
      h("pre", { class: "raw" }, text)));
}

pages.agents = {
  build() {
    this.url = h("input", { class: "grow", name: "url", placeholder: "http://127.0.0.1:8001", autocomplete: "off" });
    this.message = h("div", { id: "agent-message" });
    this.list = h("div", { id: "agents" });
    this.credentials = credentialFields();
    const form = h("form", { class: "row", id: "add-agent" }, this.url, this.credentials.el, h("button", { type: "submit" }, "Add agent"));
    form.addEventListener("submit", (event) => { event.preventDefault(); this.add(); });
    main.append(h("h1", {}, "Agents"), form, this.message, this.list);
  },
  async add() {
    this.message.replaceChildren(h("div", { class: "muted" }, "Fetching the card…"));
    try {
      const result = await api("POST", "/api/agents", { url: this.url.value, credentials: this.credentials.value() });
      this.credentials.clear();
      S.agents[result.agent.url] = result.agent;
      const hosts = result.hosts.map((r) => r.error ? `${r.name}: ${r.error}` : `registered with ${r.name}`);
      this.message.replaceChildren(h("div", { class: `banner ${result.agent.valid ? "ok" : "bad"}` },
        `Added ${result.agent.name}` + (result.agent.valid ? "." : ": its card has problems, see below.") +
        (hosts.length ? ` ${hosts.join("; ")}.` : "")));
      this.url.value = "";
      this.render();
    } catch (error) {
      this.message.replaceChildren(h("div", { class: "banner bad", id: "agent-error" }, error.message));
    }
  },
  render() {
    this.list.replaceChildren(...Object.values(S.agents).map(renderAgent));
  },
};

function renderChecks(agent) {
  return agent.checks.map((check) => h("div", { class: `check ${check.valid ? "ok" : "bad"}`, "data-version": check.version },
    check.valid ? `✓ a valid ${check.spec} card` : `✗ not a valid ${check.spec} card:`,
    check.problems.length ? h("ul", {}, check.problems.map((p) => h("li", {}, p))) : null,
    check.notes.length ? h("div", { class: "notes" }, check.notes.join("; ")) : null));
}

function renderAgent(agent) {
  const card = agent.card;
  const skills = Array.isArray(card.skills) ? card.skills : [];
  return h("div", { class: "card", "data-agent": agent.url },
    h("div", { class: "row" }, h("strong", {}, agent.name), h("span", { class: "url" }, agent.url),
      (agent.credentials || []).length ? h("span", { class: "tag", "data-credentials": agent.credentials.join(" ") },
        `credentials: ${agent.credentials.join(", ")}`) : null,
      h("a", { href: `/?agent=${encodeURIComponent(agent.url)}` }, "talk"),
      h("a", { href: `/inspector?url=${encodeURIComponent(agent.url)}` }, "inspect"),
      h("button", { class: "plain", onclick: async () => {
        await api("DELETE", `/api/agents?url=${encodeURIComponent(agent.url)}`);
        delete S.agents[agent.url]; pages.agents.render();
      } }, "remove")),
    typeof card.description === "string" ? h("p", {}, card.description) : null,
    renderChecks(agent),
    skills.length ? h("div", {}, h("h2", {}, "Skills"), h("ul", {}, skills.map((s) => h("li", {},
      h("strong", {}, String(s.name || s.id)), ` — ${s.description || ""} `,
      (Array.isArray(s.tags) ? s.tags : []).map((t) => h("span", { class: "tag" }, t)),
      Array.isArray(s.examples) && s.examples.length ? h("div", { class: "muted" }, `e.g. ${s.examples[0]}`) : null)))) : null,
    agent.host ? h("div", {}, h("h2", {}, "Delegates to"), (agent.hostAgents || []).length
      ? h("ul", {}, agent.hostAgents.map((a) => h("li", {}, h("strong", {}, a.name || a.url), ` ${a.url}`)))
      : h("p", { class: "muted" }, "no agents yet")) : null,
    h("details", {}, h("summary", { class: "muted" }, "the card as served"), h("pre", {}, JSON.stringify(card, null, 2))));
}

pages.inspector = {
  conversation: null,
  build() {
    this.url = h("input", { class: "grow", name: "url", value: PARAMS.get("url") || "", placeholder: "An A2A agent's URL" });
    this.info = h("div", { id: "inspected" });
    this.interface = h("select", { name: "interface" });
    this.interface.addEventListener("change", () => { this.conversation = null; this.render(); });
    this.input = h("input", { class: "grow", name: "message", placeholder: "Message", autocomplete: "off" });
    this.items = h("div", { class: "items" });
    this.log = h("ol", { class: "timeline", id: "frames" });
    this.credentials = credentialFields();
    const load = h("form", { class: "row", id: "inspect" }, this.url, this.credentials.el, h("button", { type: "submit" }, "Inspect"));
    load.addEventListener("submit", (event) => { event.preventDefault(); this.load(); });
    const send = h("form", { class: "row", id: "inspector-send" }, this.interface, this.input, h("button", { type: "submit" }, "Send"));
    send.addEventListener("submit", (event) => { event.preventDefault(); this.send(); });
    main.append(h("h1", {}, "Inspector"), load, this.info, send, this.items,
      h("h2", {}, "On the wire"), this.log);
    // A link (?url=) only fills in the address: fetching it is the user's choice (Inspect).
  },
  async load() {
    this.info.replaceChildren(h("div", { class: "muted" }, "Fetching the card…"));
    this.conversation = null;
    try {
      const agent = await api("POST", "/api/inspect", { url: this.url.value, credentials: this.credentials.value() });
      this.credentials.clear();
      this.agent = agent;
      this.info.replaceChildren(h("div", { class: "card" }, h("strong", {}, agent.name), " ",
        h("span", { class: "url" }, agent.cardUrl), renderChecks(agent)));
      this.interface.replaceChildren(...agent.interfaces.filter((i) => i.spoken).map((i) =>
        h("option", { value: `${i.transport}|${i.version}` }, `${i.transport} ${i.version}${i.legacy ? " (legacy)" : ""} — ${i.url}`)));
    } catch (error) {
      this.agent = null;
      this.info.replaceChildren(h("div", { class: "banner bad" }, error.message));
    }
    this.render();
  },
  async send() {
    if (!this.agent || !this.input.value.trim()) return;
    const [transport, version] = this.interface.value.split("|");
    const text = this.input.value;
    this.input.value = "";
    this.conversation = await sendMessage(this.agent.url, this.conversation,
      { text, transport, version });
    this.render();
  },
  render() {
    const conversation = this.conversation && S.conversations[this.conversation];
    if (!conversation) { this.items.replaceChildren(); this.log.replaceChildren(); return; }
    renderItems(this.items, conversation);
    this.log.replaceChildren(...(S.entries[conversation.id] || []).map(renderEntry));
  },
};

// --- the live connection ---------------------------------------------------------------------

S.entries = {}; // conversation id -> its turns' entries, as they come (for the inspector)

function receive(name, data) {
  if (name === "snapshot") {
    S.agents = Object.fromEntries(data.agents.map((a) => [a.url, a]));
    S.conversations = Object.fromEntries(data.conversations.map((c) => [c.id, c]));
    S.tasks = Object.fromEntries(data.tasks.map((t) => [t.id, t]));
    S.timeline = data.timeline || [];
    S.traceUrl = data.traceUrl;
  } else if (name === "agent") S.agents[data.url] = data;
  else if (name === "agentRemoved") delete S.agents[data.url];
  else if (name === "conversation") S.conversations[data.id] = data;
  else if (name === "task") S.tasks[data.id] = data;
  else if (name === "entry") {
    (S.entries[data.conversation] = S.entries[data.conversation] || []).push(data);
    if (TASK_ID && S.timeline.some((e) => e.turn === data.turn)) S.timeline.push(data);
    else if (TASK_ID && data.task === TASK_ID) { refreshTimeline(); return; } // a new turn: its first frames too
  }
  pages[PAGE].render();
}

async function refreshTimeline() {
  const state = await api("GET", `/api/state?task=${encodeURIComponent(TASK_ID)}`);
  S.timeline = state.timeline;
  pages[PAGE].render();
}

function connect() {
  const live = document.getElementById("live");
  const query = new URLSearchParams({ session: SESSION });
  if (TASK_ID) query.set("task", TASK_ID);
  const source = new EventSource(`/ui/events?${query}`);
  for (const name of ["snapshot", "agent", "agentRemoved", "conversation", "task", "entry"]) {
    source.addEventListener(name, (event) => receive(name, JSON.parse(event.data)));
  }
  source.onopen = () => { live.textContent = "live"; live.classList.add("on"); };
  source.onerror = () => { live.textContent = "reconnecting…"; live.classList.remove("on"); };
}

for (const link of document.querySelectorAll("[data-nav]")) {
  if (link.dataset.nav === PAGE || (PAGE === "task" && link.dataset.nav === "tasks")) link.classList.add("current");
}
main.replaceChildren();
pages[PAGE].build();
connect();
