// h(tag, attrs, ...children): a small element builder; on* attributes become listeners.
// Children are nodes or text (never parsed as HTML).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// A duration in ms as the tables show it: two decimals under 10, one above; "—" if none.
export const ms = (v) => (v == null ? "—" : v.toFixed(v < 10 ? 2 : 1));
