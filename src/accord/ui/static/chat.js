// accord UI: the Conversations page.
"use strict";

pages.chat = {
  current: PARAMS.get("c"),
  agent: PARAMS.get("agent"),
  build() {
    this.list = h("div", { class: "conversations" });
    this.select = h("select", { name: "agent", class: "grow", "aria-label": "Agent to talk to" });
    this.select.addEventListener("change", () => { this.agent = this.select.value; this.open(null); });
    this.items = h("div", { class: "items", id: "items" });
    this.input = h("textarea", { class: "grow", name: "message", rows: 1, placeholder: "Message (Shift+Enter: a new line)",
      autocomplete: "off", "aria-label": "Message" });
    this.attachment = attachControl("file");
    this.error = h("div", { class: "error", id: "composer-error", role: "alert" });
    const composer = h("form", { class: "composer" }, this.input, this.attachment.el, h("button", { type: "submit" }, "Send"));
    composer.addEventListener("submit", (event) => { event.preventDefault(); this.send(); });
    sendsOnEnter(this.input, composer);
    this.sidebar = h("aside", { class: "sidebar", id: "conversations", "aria-label": "Conversations" },
      h("div", { class: "row" }, this.select),
      h("p", {}, h("button", { type: "button", class: "plain", onclick: () => this.open(null) }, "New conversation")), this.list);
    // On a phone the sidebar folds away behind this button.
    this.toggle = h("button", { type: "button", class: "plain sidebar-toggle", "aria-expanded": "false",
      "aria-controls": "conversations", onclick: () => this.fold(this.toggle.getAttribute("aria-expanded") === "true") },
    "☰ Conversations");
    main.append(h("div", { class: "chat" }, this.sidebar,
      h("section", {}, this.toggle, h("h1", { id: "title" }, "Conversation"), this.items, this.error, composer)));
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.sidebar.classList.contains("open")) { this.fold(true); this.toggle.focus(); }
    });
    follow.start();
  },
  fold(closed) {
    this.sidebar.classList.toggle("open", !closed);
    this.toggle.setAttribute("aria-expanded", String(!closed));
    if (!closed) (this.sidebar.querySelector("a.current, a, button")).focus();
  },
  open(id) {
    this.current = id;
    const url = new URL(location.href);
    if (id) url.searchParams.set("c", id); else url.searchParams.delete("c");
    history.replaceState(null, "", url);
    this.items.replaceChildren();
    this.fold(true);
    this.render();
    follow.jump();
  },
  // Send what the message box holds: it is emptied once the UI's server took it, and kept to
  // try again when it did not.
  async send() {
    const typed = this.input.value;
    if (!typed.trim() && !this.attachment.chosen()) return;
    const conversation = this.current && S.conversations[this.current];
    const agent = conversation ? conversation.agent : this.select.value;
    if (!agent) { this.error.textContent = "Add an agent first (Agents page)."; return; }
    this.error.replaceChildren();
    try {
      const file = await this.attachment.read();
      const id = await sendMessage(agent, this.current, { text: typed.trim(), file });
      if (this.input.value === typed) { this.input.value = ""; this.input.style.height = ""; }
      this.attachment.clear();
      follow.jump();
      if (id !== this.current) this.open(id);
    } catch (error) {
      this.error.replaceChildren(`Not sent: ${error.message} Your message is still in the box. `,
        h("button", { type: "button", class: "plain", onclick: () => this.send() }, "Retry"));
    }
  },
  render() {
    const before = document.scrollingElement.scrollHeight;
    const agents = Object.values(S.agents);
    const conversation = this.current && S.conversations[this.current];
    const chosen = conversation ? conversation.agent : this.agent || this.select.value || (agents[0] && agents[0].url);
    this.select.replaceChildren(...agents.map((a) => h("option", { value: a.url, selected: a.url === chosen }, a.name)));
    this.select.disabled = Boolean(conversation);
    this.list.replaceChildren(...Object.values(S.conversations).filter((c) => !c.transport && !c.version).reverse().map((c) => {
      const first = c.items.find((item) => item.role === "user");
      const text = first ? first.message.parts.map((p) => p.text || "").join(" ") : "";
      return h("a", { href: `/?c=${c.id}`, class: c.id === this.current ? "current" : null,
        "aria-current": c.id === this.current ? "page" : null,
        onclick: (event) => { event.preventDefault(); this.open(c.id); } },
      h("div", {}, agentName(c.agent)), h("div", { class: "muted" }, shown(text.slice(0, 60))));
    }));
    document.getElementById("title").textContent = conversation ? `With ${agentName(conversation.agent)}`
      : chosen ? `New conversation with ${agentName(chosen)}` : "Add an agent to start";
    if (conversation) renderItems(this.items, conversation);
    if (!this.sidebar.classList.contains("open")) follow.after(document.scrollingElement.scrollHeight > before);
  },
};

// Following the newest answer: while the reader is at the bottom of the page, what arrives keeps
// them there; scrolled up to read, the page stays put and a button offers to jump down.
const follow = {
  following: true,
  start() {
    this.button = h("button", { type: "button", id: "new-messages", hidden: true, onclick: () => this.jump() }, "New messages ↓");
    document.body.append(this.button);
    addEventListener("scroll", () => {
      this.following = this.atBottom();
      if (this.following) this.button.hidden = true;
    }, { passive: true });
  },
  atBottom() {
    const page = document.scrollingElement;
    return innerHeight + scrollY >= page.scrollHeight - 48;
  },
  after(grew) {
    if (this.following) scrollTo(0, document.scrollingElement.scrollHeight);
    else if (grew) this.button.hidden = false;
  },
  jump() {
    this.following = true;
    this.button.hidden = true;
    scrollTo(0, document.scrollingElement.scrollHeight);
  },
};
