// accord UI: follows the server's changes on one EventSource and starts the page.
"use strict";

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
