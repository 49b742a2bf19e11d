// accord UI: the Conversations page.
"use strict";

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
