// accord UI: the Tasks, Task, Agents and Inspector pages.
"use strict";

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
      h("td", { "data-label": "Task" }, h("a", { href: `/tasks/${encodeURIComponent(t.id)}?agent=${encodeURIComponent(agent)}` }, shortId(t.id))),
      h("td", { class: "muted", "data-label": "Context" }, shortId(t.contextId)), h("td", { "data-label": "State" }, stateBadge(t.state)),
      h("td", { "data-label": "Last message" }, shown(t.text.slice(0, 120))), h("td", { "data-label": "Updated" }, when(t.timestamp)))));
    if (!this.listed.children.length) this.listed.append(h("tr", {}, h("td", { colspan: 5, class: "muted" }, "The agent keeps no tasks for this UI.")));
  },
  render() {
    const tasks = Object.values(S.tasks).sort((a, b) => b.updated - a.updated);
    this.body.replaceChildren(...tasks.map((t) => h("tr", { "data-task": t.id },
      h("td", { "data-label": "Task" }, h("a", { href: `/tasks/${encodeURIComponent(t.id)}` }, shortId(t.id))),
      h("td", { "data-label": "Agent" }, agentName(t.agent)), h("td", { "data-label": "State" }, stateBadge(t.state)),
      h("td", { "data-label": "Last message" }, shown(t.text.slice(0, 120))), h("td", { "data-label": "Updated" }, time(t.updated)))));
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

pages.agents = {
  build() {
    this.url = h("input", { class: "grow", name: "url", placeholder: "http://127.0.0.1:8001", autocomplete: "off", "aria-label": "The agent's URL" });
    this.message = h("div", { id: "agent-message" });
    this.list = h("div", { id: "agents" });
    this.credentials = credentialFields();
    const form = h("form", { class: "row", id: "add-agent" }, this.url, this.credentials.el, h("button", { type: "submit" }, "Add agent"));
    form.addEventListener("submit", (event) => { event.preventDefault(); this.add(); });
    main.append(h("h1", {}, "Agents"), form, this.message, this.list, registrySection());
  },
  async add() {
    this.message.replaceChildren(h("div", { class: "muted" }, "Fetching the card…"));
    try {
      const result = await api("POST", "/api/agents", { url: this.url.value, credentials: this.credentials.value() });
      this.credentials.clear();
      S.agents[result.agent.url] = result.agent;
      const hosts = result.hosts.map((r) => r.error ? `${r.name}: ${r.error.replace(/\.$/, "")}.` : `Registered with ${r.name}.`);
      this.message.replaceChildren(h("div", { class: `banner ${result.agent.valid ? "ok" : "bad"}`, role: "status" },
        [`Added ${result.agent.name}` + (result.agent.valid ? "." : ": its card has problems, see below."), ...hosts].join(" ")));
      this.url.value = "";
      this.render();
    } catch (error) {
      this.message.replaceChildren(h("div", { class: "banner bad", id: "agent-error", role: "alert" }, error.message));
    }
  },
  render() {
    this.list.replaceChildren(...Object.values(S.agents).map(renderAgent));
  },
};

// The registry `accord ui --registry URL` names: its agents, searched; each added by its URL.
function registrySection() {
  const query = h("input", { class: "grow", name: "registry-query", placeholder: "what should the agent do?",
    "aria-label": "Search the registry", autocomplete: "off" });
  const found = h("div", { id: "registry-agents" });
  const section = h("section", { id: "registry", hidden: true }, h("h2", {}, "Registry"));
  const search = async () => {
    try {
      const page = await api("GET", `/api/registry?q=${encodeURIComponent(query.value)}`);
      if (!page.registry) return;
      section.hidden = false;
      found.replaceChildren(h("p", { class: "muted" }, `${page.total} agent(s) found in ${page.registry}`),
        ...page.agents.map(registryAgent));
    } catch (error) {
      section.hidden = false;
      found.replaceChildren(h("div", { class: "banner bad" }, error.message));
    }
  };
  const form = h("form", { class: "row" }, query, h("button", { type: "submit" }, "Search"));
  form.addEventListener("submit", (event) => { event.preventDefault(); search(); });
  section.append(form, found);
  search();
  return section;
}

function registryAgent(agent) {
  const add = () => { pages.agents.url.value = agent.url; pages.agents.add(); };
  return h("div", { class: "card", "data-registry-agent": agent.url },
    h("div", { class: "row" }, h("strong", {}, agent.name), h("span", { class: "url" }, agent.url),
      agent.status === "up" ? null : h("span", { class: "tag" }, agent.status),
      h("button", { class: "plain", onclick: add }, "add")),
    typeof agent.description === "string" ? h("p", {}, agent.description) : null);
}

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
      h("button", { type: "button", class: "plain", "aria-label": `remove ${agent.name}`, onclick: async () => {
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
    this.url = h("input", { class: "grow", name: "url", value: PARAMS.get("url") || "", placeholder: "An A2A agent's URL", "aria-label": "The agent's URL" });
    this.info = h("div", { id: "inspected" });
    this.interface = h("select", { name: "interface", "aria-label": "Interface" });
    this.interface.addEventListener("change", () => { this.conversation = null; this.render(); });
    this.input = h("textarea", { class: "grow", name: "message", rows: 1, placeholder: "Message", "aria-label": "Message" });
    this.error = h("div", { class: "error", role: "alert" });
    this.items = h("div", { class: "items" });
    this.log = h("ol", { class: "timeline", id: "frames" });
    this.credentials = credentialFields();
    const load = h("form", { class: "row", id: "inspect" }, this.url, this.credentials.el, h("button", { type: "submit" }, "Inspect"));
    load.addEventListener("submit", (event) => { event.preventDefault(); this.load(); });
    const send = h("form", { class: "row", id: "inspector-send" }, this.interface, this.input, h("button", { type: "submit" }, "Send"));
    send.addEventListener("submit", (event) => { event.preventDefault(); this.send(); });
    sendsOnEnter(this.input, send);
    main.append(h("h1", {}, "Inspector"), load, this.info, send, this.error, this.items,
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
      this.info.replaceChildren(h("div", { class: "banner bad", role: "alert" }, error.message));
    }
    this.render();
  },
  async send() {
    if (!this.agent || !this.input.value.trim()) return;
    const [transport, version] = this.interface.value.split("|");
    const text = this.input.value;
    this.error.textContent = "";
    try {
      this.conversation = await sendMessage(this.agent.url, this.conversation, { text, transport, version });
      if (this.input.value === text) this.input.value = "";
    } catch (error) { this.error.textContent = `Not sent: ${error.message}`; }
    this.render();
  },
  render() {
    const conversation = this.conversation && S.conversations[this.conversation];
    if (!conversation) { this.items.replaceChildren(); this.log.replaceChildren(); return; }
    renderItems(this.items, conversation);
    this.log.replaceChildren(...(S.entries[conversation.id] || []).map(renderEntry));
  },
};
