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

const pages = {}; // each page: build() once, render() on every change
