// accord UI: parts, artifacts and forms as the pages show them.
"use strict";

function renderParts(parts, ctx) {
  return (parts || []).map((part) => renderPart(part, ctx));
}

function renderPart(part, ctx) {
  if (part.kind === "text") return h("div", { class: "text" }, shown(part.text));
  if (part.kind === "file") return renderFile(part.file, ctx.unnamed);
  if (part.kind === "data") {
    const data = part.data || {};
    if (data.type === "form" && data.form && data.form.properties) return renderForm(data, ctx);
    return h("pre", { class: "data" }, shown(JSON.stringify(data, null, 2)));
  }
  return h("pre", {}, shown(JSON.stringify(part, null, 2)));
}

// --- names: what a file is saved as, what a nameless artifact is called ----------------------

const EXTENSIONS = { "text/plain": "txt", "text/markdown": "md", "text/x-python": "py", "text/javascript": "js",
  "image/jpeg": "jpg", "image/svg+xml": "svg", "application/octet-stream": "bin" };
const TYPE_NAMES = { "text/plain": "Plain", "image/svg+xml": "SVG" };

function extension(mime) {
  if (EXTENSIONS[mime]) return EXTENSIONS[mime];
  const subtype = String(mime).split("/")[1] || "";
  const plain = subtype.replace(/^x-/, "").split(/[+;]/)[0];
  return /^[a-z0-9]{1,8}$/i.test(plain) ? plain.toLowerCase() : "bin";
}

// "application/json" → "JSON", "text/x-python" → "Python": a media type as a word.
function typeName(mime) {
  if (TYPE_NAMES[mime]) return TYPE_NAMES[mime];
  const word = extension(mime) === "bin" ? "" : (String(mime).split("/")[1] || "").replace(/^x-/, "").split(/[+;]/)[0];
  if (!word) return "Binary";
  return word.length <= 4 ? word.toUpperCase() : sentence(word);
}

// An artifact without a name is called by what it holds.
function artifactTitle(artifact) {
  const parts = artifact.parts || [];
  if (artifact.name) return artifact.name;
  if (parts.length && parts.every((p) => p.kind === "text")) return `${typeName(textMime(artifact))} text`;
  if (parts.length === 1 && parts[0].kind === "file") {
    const mime = parts[0].file.mimeType || "application/octet-stream";
    return parts[0].file.name || `${typeName(mime)} ${mime.startsWith("image/") ? "image" : "file"}`;
  }
  if (parts.length && parts.every((p) => p.kind === "data")) return "Data";
  return "Artifact";
}

// The name a text artifact is saved under: its own, not the title a host gives it ("Coder: store.py").
function savedName(artifact) {
  const origin = artifact.metadata && artifact.metadata["accord.host"];
  let name = artifact.name || "";
  if (origin && typeof origin.agent === "string" && name.startsWith(`${origin.agent}: `)) {
    name = name.slice(origin.agent.length + 2);
  }
  name = name.split("/").pop().trim();
  return name || `artifact.${extension(textMime(artifact))}`;
}

const textMime = (artifact) => (artifact.metadata && artifact.metadata.mimeType) || "text/plain";

function renderFile(file, unnamed = "file") {
  const mime = file.mimeType || "application/octet-stream";
  if (file.size !== undefined && !file.bytes && !file.uri) { // a file the user sent, shown without its bytes
    return h("div", { class: "file attached" }, `Attached ${file.name || "a file"} (${mime}, ${size(file.size)})`);
  }
  const href = file.bytes ? `data:${mime};base64,${file.bytes}` : safeUrl(file.uri);
  const name = file.name || `${unnamed}.${extension(mime)}`;
  const link = h("a", { href, download: name, class: "download" }, `Download ${name}`);
  if (mime.startsWith("image/")) {
    return h("div", { class: "file" }, h("img", { class: "inline", src: href, alt: name }), link);
  }
  return h("div", { class: "file" }, link, h("span", { class: "muted" }, ` (${mime})`));
}

function renderArtifact(artifact) {
  const parts = artifact.parts || [];
  const title = artifactTitle(artifact);
  const box = h("div", { class: "artifact", "data-artifact": title }, h("div", { class: "name" }, title));
  if (parts.length && parts.every((p) => p.kind === "text")) {
    const text = parts.map((p) => p.text).join("");
    const href = `data:${textMime(artifact)};charset=utf-8,${encodeURIComponent(text)}`;
    box.append(h("pre", { class: "file-text" }, shown(text)),
      h("a", { href, download: savedName(artifact), class: "download" }, `Download ${savedName(artifact)}`));
  } else {
    // The same file twice (inline bytes and a URL, as the image sample sends): shown once.
    const shownFiles = new Set();
    for (const part of parts) {
      const name = part.kind === "file" && part.file.name;
      if (name && shownFiles.has(name) && part.file.uri) {
        box.append(h("div", { class: "muted" }, "also at ", h("a", { href: safeUrl(part.file.uri), class: "file-url" }, part.file.uri)));
      } else {
        box.append(renderPart(part, { unnamed: "artifact" }));
      }
      if (name) shownFiles.add(name);
    }
  }
  return box;
}

// --- forms -----------------------------------------------------------------------------------

// A field the schema marks secret: typed masked, sent marked secret, never shown.
const isSecret = (field) => field.format === "password" || field.writeOnly === true;

function renderForm(data, ctx) {
  const schema = data.form;
  const values = data.formData || {};
  const errors = data.errors || {};
  const required = new Set(schema.required || []);
  const form = h("form", { class: "a2a-form", novalidate: true, "data-answering": Boolean(ctx.answer) },
    schema.title ? h("strong", {}, schema.title) : null);
  for (const [name, field] of Object.entries(schema.properties)) {
    const secret = isSecret(field);
    // A secret comes back (if at all) as the UI's mask: the field starts empty, never with the mask.
    const given = values[name] === undefined || values[name] === null || (secret && String(values[name]).includes(HIDDEN))
      ? "" : String(values[name]);
    let input;
    if (Array.isArray(field.enum)) {
      input = h("select", { name }, h("option", { value: "" }, "—"),
        field.enum.map((option) => h("option", { value: option, selected: option === given }, option)));
    } else {
      const type = secret ? "password" : field.type === "number" || field.type === "integer" ? "number"
        : field.format === "date" ? "date" : "text";
      input = h("input", { name, type, value: secret ? null : given, autocomplete: secret ? "off" : null,
        step: type === "number" ? "any" : null });
    }
    input.disabled = !ctx.answer;
    input.dataset.type = field.type;
    input.dataset.given = given; // what the agent has: emptied, it is sent as cleared (null)
    if (secret) input.dataset.secret = "";
    form.append(h("label", {},
      h("span", {}, (field.title || name) + (required.has(name) ? " *" : "")),
      secret && ctx.answer ? maskedField(input) : input,
      field.description ? h("span", { class: "hint" }, field.description) : null,
      errors[name] ? h("span", { class: "field-error", "data-field": name }, `${field.title || name} ${errors[name]}`) : null));
  }
  if (ctx.answer) {
    const attachment = attachControl();
    const error = h("div", { class: "error", role: "alert" });
    form.append(h("div", { class: "row" }, attachment.el, h("button", { type: "submit" }, "Submit")), error);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const submitted = {};
      const secretFields = [];
      for (const input of form.querySelectorAll("[data-type]")) {
        if (input.value === "") {
          if (input.dataset.given !== "") submitted[input.name] = null; // cleared by the user
          continue;
        }
        const number = Number(input.value);
        submitted[input.name] = input.dataset.type === "number" && !Number.isNaN(number) ? number : input.value;
        if (input.dataset.secret !== undefined) secretFields.push(input.name);
      }
      answerWith(attachment, error, (file) => ctx.answer({ text: "", data: submitted, file, secretFields }));
    });
  }
  return form;
}

// A masked input with a box to tick to see what was typed (to check it before sending).
function maskedField(input) {
  const show = h("input", { type: "checkbox", class: "show-typed", "aria-label": "Show what is typed" });
  show.addEventListener("change", () => { input.type = show.checked ? "text" : "password"; });
  return h("span", { class: "masked-field" }, input, show, h("span", { class: "muted", "aria-hidden": "true" }, "show"));
}
