// h(tag, attrs, ...children): a small element builder; on* attributes become listeners.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    else if (key === "html") el.innerHTML = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// A tiny SVG chart: bars for `values`, an optional line for `line` (own scale).
export function spark(values, { width = 160, height = 32, line = null, title = "" } = {}) {
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("width", width); svg.setAttribute("height", height);
  svg.setAttribute("class", "spark"); svg.setAttribute("role", "img"); svg.setAttribute("aria-label", title);
  const max = Math.max(1, ...values);
  const w = width / Math.max(1, values.length);
  values.forEach((v, i) => {
    const r = document.createElementNS(ns, "rect");
    const bh = v ? Math.max(1.5, (v / max) * (height - 2)) : 0;
    r.setAttribute("x", (i * w + 0.5).toFixed(1)); r.setAttribute("width", Math.max(1, w - 1).toFixed(1));
    r.setAttribute("y", (height - bh).toFixed(1)); r.setAttribute("height", bh.toFixed(1));
    r.setAttribute("fill", "#9fb1ee");
    svg.append(r);
  });
  if (line && line.some((v) => v !== null)) {
    const lmax = Math.max(...line.filter((v) => v !== null)) || 1;
    const pts = line.map((v, i) => (v === null ? null : `${(i * w + w / 2).toFixed(1)},${(height - 1 - (v / lmax) * (height - 4)).toFixed(1)}`)).filter(Boolean);
    const p = document.createElementNS(ns, "polyline");
    p.setAttribute("points", pts.join(" ")); p.setAttribute("fill", "none");
    p.setAttribute("stroke", "#c0392b"); p.setAttribute("stroke-width", "1.5");
    svg.append(p);
  }
  const t = document.createElementNS(ns, "title"); t.textContent = title; svg.append(t);
  return svg;
}
