// accord UI: parts, artifacts and forms as the pages show them.
"use strict";

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
