// A form generated from a JSON Schema (the shapes Pydantic emits for tool inputs):
// objects, arrays, enums/consts, Optional (anyOf with null), local $refs, and
// oneOf/anyOf unions with a const discriminator (composite tools' actions).
// buildForm(schema, value) -> {element, value()}; value() is what gets sent.

import { h } from "./dom.js";

const TEXTAREA_NAMES = new Set(["code", "script", "content", "body", "text", "command", "patch", "prompt"]);

// A schema written elsewhere may nest without end (a recursive model) or double at each
// level ($refs used twice): past MAX_DEPTH nested objects, or MAX_FIELDS fields in one
// form, an object, array or union is typed as JSON instead of unfolded into fields.
const MAX_DEPTH = 6;
const MAX_FIELDS = 200;

function resolve(schema, form) {
  let s = schema || {};
  for (let depth = 0; s.$ref && depth < 20; depth++) {
    const path = s.$ref.replace(/^#\//, "").split("/");
    let target = form.schema;
    for (const part of path) target = target?.[part];
    const { $ref, ...rest } = s;
    s = { ...(target || {}), ...rest };
  }
  return s;
}

function nonNull(schema, form) {
  // Optional[X] comes as anyOf [X, {type: null}]: use X, remember it may be empty.
  const s = resolve(schema, form);
  const options = s.anyOf || s.oneOf;
  if (options) {
    const real = options.filter((o) => resolve(o, form).type !== "null");
    if (real.length === 1 && real.length < options.length) {
      const { anyOf, oneOf, ...rest } = s;
      return { ...resolve(real[0], form), ...rest, _nullable: true };
    }
  }
  return s;
}

function discriminator(variants, form) {
  // The property every variant pins with a const (e.g. "action").
  const first = resolve(variants[0], form).properties || {};
  for (const key of Object.keys(first)) {
    if (variants.every((v) => resolve(v, form).properties?.[key]?.const !== undefined)) return key;
  }
  return null;
}

function label(name, schema, required) {
  const text = schema.title && schema.title.toLowerCase() !== name.replace(/_/g, " ") ? `${name} (${schema.title})` : name;
  return h("label", { for: `f-${name}` }, text, required ? h("span", { class: "req" }, " *") : null);
}

// `text in backticks` (as in docstrings) becomes <code>; everything else stays text.
export function withCode(text) {
  return text.split("`").map((part, i) => (i % 2 ? h("code", {}, part) : part));
}

function help(schema) {
  const parts = [];
  if (schema.description) parts.push(schema.description);
  if (schema.default !== undefined && schema.default !== null) parts.push(`default: ${JSON.stringify(schema.default)}`);
  return parts.length ? h("div", { class: "help" }, ...withCode(parts.join(" · "))) : null;
}

function scalarInput(name, schema, value, required) {
  const id = `f-${name}`;
  if (schema.enum || schema.const !== undefined) {
    const options = schema.enum || [schema.const];
    const select = h("select", { id, name },
      required ? null : h("option", { value: "" }, "—"),
      ...options.map((o) => h("option", { value: JSON.stringify(o) }, String(o))));
    const initial = value !== undefined ? value : schema.default;
    if (initial !== undefined && initial !== null) select.value = JSON.stringify(initial);
    return { element: select, value: () => (select.value === "" ? undefined : JSON.parse(select.value)) };
  }
  if (schema.type === "boolean") {
    const select = h("select", { id, name },
      required ? null : h("option", { value: "" }, "—"),
      h("option", { value: "true" }, "true"), h("option", { value: "false" }, "false"));
    const initial = value !== undefined ? value : schema.default;
    select.value = initial === undefined || initial === null ? (required ? "false" : "") : String(initial);
    return { element: select, value: () => (select.value === "" ? undefined : select.value === "true") };
  }
  if (schema.type === "integer" || schema.type === "number") {
    const input = h("input", { id, name, type: "text", inputmode: "decimal", placeholder: schema.type });
    if (value !== undefined && value !== null) input.value = String(value);
    return {
      element: input,
      value: () => {
        const text = input.value.trim();
        if (text === "") return undefined; // left empty: the server says "Field required" if it is
        const n = Number(text);
        return Number.isFinite(n) ? n : text; // the server names the field if it is not a number
      },
    };
  }
  if (schema.type === "string" || schema.type === undefined) {
    const multiline = TEXTAREA_NAMES.has(name) || (schema.maxLength || 0) > 500;
    const input = multiline
      ? h("textarea", { id, name, class: "code", rows: 6 })
      : h("input", { id, name, type: "text", placeholder: schema.examples?.[0] ?? schema.format ?? "" });
    if (value !== undefined && value !== null) input.value = typeof value === "string" ? value : JSON.stringify(value);
    return { element: input, value: () => (input.value === "" && !required ? undefined : input.value) };
  }
  // Anything else (free-form objects, mixed unions): JSON text.
  const area = h("textarea", { id, name, class: "code", rows: 3, placeholder: "JSON" });
  if (value !== undefined) area.value = JSON.stringify(value, null, 2);
  return {
    element: area,
    value: () => {
      if (area.value.trim() === "") return undefined;
      try { return JSON.parse(area.value); } catch { return area.value; }
    },
  };
}

function arrayInput(name, schema, value, form) {
  const itemSchema = schema.items || {};
  const list = h("div", { class: "array" });
  const items = [];
  const add = (v) => {
    const field = node(`${name}[${items.length}]`, itemSchema, v, true, form);
    const row = h("div", { class: "array-item" }, field.element);
    const entry = { field, row };
    row.append(h("button", { type: "button", class: "danger", title: "Remove", onclick: () => {
      items.splice(items.indexOf(entry), 1); row.remove();
    } }, "×"));
    items.push(entry);
    list.append(row);
  };
  (Array.isArray(value) ? value : []).forEach(add);
  const element = h("div", {}, list, h("button", { type: "button", onclick: () => add(undefined) }, "+ add item"));
  return { element, value: () => (items.length ? items.map((i) => i.field.value()) : undefined) };
}

function objectInput(schema, value, form) {
  const required = new Set(schema.required || []);
  const fields = [];
  const element = h("div", {});
  for (const [key, sub] of Object.entries(schema.properties || {})) {
    const field = node(key, sub, value?.[key], required.has(key), form);
    fields.push([key, field]);
    element.append(field.element);
  }
  return {
    element,
    value: () => {
      const out = {};
      for (const [key, field] of fields) {
        const v = field.value();
        if (v !== undefined) out[key] = v;
      }
      return out;
    },
  };
}

function unionInput(name, schema, value, form) {
  const variants = (schema.oneOf || schema.anyOf).map((v) => resolve(v, form));
  const key = discriminator(variants, form);
  if (!key) return scalarInput(name, { type: "json" }, value, false);
  const choose = h("select", { id: `f-${name || "root"}-${key}`, name: key, "aria-label": key },
    ...variants.map((v, i) => h("option", { value: String(i) }, String(v.properties[key].const))));
  const index = Math.max(0, variants.findIndex((v) => v.properties[key].const === value?.[key]));
  choose.value = String(index);
  const holder = h("div", {});
  const description = h("div", { class: "help" });
  let current;
  const show = (keep) => {
    const variant = variants[Number(choose.value)];
    const { [key]: _pinned, ...props } = variant.properties;
    const rest = { ...variant, properties: props, required: (variant.required || []).filter((r) => r !== key) };
    current = objectInput(rest, keep, form);
    description.textContent = variant.description || variant.properties[key].description || "";
    holder.replaceChildren(current.element);
  };
  choose.addEventListener("change", () => show(current ? current.value() : undefined));
  show(value);
  const element = h("div", { class: "field" }, h("label", {}, key, h("span", { class: "req" }, " *")), choose, description, holder);
  return { element, value: () => ({ [key]: variants[Number(choose.value)].properties[key].const, ...current.value() }) };
}

function node(name, schema, value, required, form) {
  const s = nonNull(schema, form);
  form.fields += 1;
  const unfolds = s.properties || s.oneOf || s.anyOf || s.type === "array";
  if (unfolds && (form.depth >= MAX_DEPTH || form.fields > MAX_FIELDS)) {
    const inner = scalarInput(name, { ...s, type: "json" }, value, false);
    return { element: h("div", { class: "field" }, label(name, s, required), inner.element, help(s)), value: inner.value };
  }
  const isUnion = (s.oneOf || s.anyOf) && !s.properties;
  if (isUnion) {
    const inner = unionInput(name, s, value, form);
    return name ? { element: h("fieldset", {}, h("legend", {}, name), help(s), inner.element), value: inner.value } : inner;
  }
  if (s.type === "object" && s.properties) {
    form.depth += 1;
    const inner = objectInput(s, value, form);
    form.depth -= 1;
    if (!name) return inner;
    return { element: h("fieldset", {}, h("legend", {}, name, required ? h("span", { class: "req" }, " *") : null), help(s), inner.element), value: () => {
      const v = inner.value();
      return Object.keys(v).length || required ? v : undefined;
    } };
  }
  const inner = s.type === "array" ? arrayInput(name, s, value, form) : scalarInput(name, s, value, required && !s._nullable);
  return { element: h("div", { class: "field" }, label(name, s, required), inner.element, help(s)), value: inner.value };
}

export function buildForm(schema, value) {
  return node("", schema, value || {}, true, { schema, depth: 0, fields: 0 });
}
