// accord UI, the base of every page: the state shown, its constants, small helpers, the API.
"use strict";

const S = { agents: {}, conversations: {}, tasks: {}, timeline: [] };
const PAGE = document.body.dataset.page;
const PARAMS = new URLSearchParams(location.search);
const TASK_ID = PAGE === "task" ? decodeURIComponent(location.pathname.split("/").pop()) : null;
const INTERRUPTED = ["input-required", "auth-required"];
const ACTIVE = ["submitted", "working", ...INTERRUPTED]; // not terminal: may be canceled
const MAX_FILE_BYTES = Number(document.body.dataset.maxFileBytes);
const SESSION = document.body.dataset.session; // the UI's API answers only requests carrying it
const HIDDEN = document.body.dataset.hidden; // what the UI's server shows in place of a secret typed
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

// A call of the UI's own API; what goes wrong is an Error saying it in words.
async function api(method, path, body) {
  let response;
  try {
    response = await fetch(path, {
      method, headers: { "Content-Type": "application/json", "X-Accord-Session": SESSION },
      body: body && JSON.stringify(body),
    });
  } catch {
    throw new Error("The UI's server did not answer: is `accord ui` still running, and the network up?");
  }
  const data = response.status === 204 ? {} : await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.error || `The UI's server answered HTTP ${response.status}.`);
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
const sentence = (text) => text.charAt(0).toUpperCase() + text.slice(1);
// Text as shown: each secret the UI's server hid in it is a masked mark, never the text behind it.
const shown = (text) => String(text).split(HIDDEN).flatMap((piece, index) => (index
  ? [h("span", { class: "secret", title: "a secret typed in a masked field: never shown, never kept" }, "••••"), piece]
  : [piece])).filter((piece) => piece !== "");
const pretty = (text) => { try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; } };

const pages = {}; // each page: build() once, render() on every change
