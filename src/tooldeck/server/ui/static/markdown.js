// Markdown of an answer, rendered safely for the Chat page and the run view: text nodes
// only (no HTML is ever parsed); **bold**, _italic_, `code`, lists and GFM tables. Each
// figure an answer binds (answer.claims) is highlighted, its source shown on hover.
import { h } from "./dom.js";
import { withCode } from "./form.js";

// A claim's span is wrapped in private-use characters before the Markdown is split, so
// the figure keeps its claim through bold, lists and tables: OPEN index CLOSE text OPEN CLOSE.
const OPEN = "\uE000", CLOSE = "\uE001";
const MARKED = /\uE000(\d+)\uE001([^\uE000]*)\uE000\uE001/;

function marked(markdown, claims) {
  if (!claims.length || markdown.includes(OPEN) || markdown.includes(CLOSE)) return markdown;
  const spans = claims.map((c, i) => [c.span[0], c.span[1], i])
    .filter(([s, e]) => 0 <= s && s < e && e <= markdown.length).sort((a, b) => a[0] - b[0]);
  let out = "", last = 0;
  for (const [s, e, i] of spans) {
    if (s < last) continue;  // overlapping spans: the first one wins
    out += markdown.slice(last, s) + OPEN + i + CLOSE + markdown.slice(s, e) + OPEN + CLOSE;
    last = e;
  }
  return out + markdown.slice(last);
}

function formula(claim) {
  const input = (x) => (typeof x === "string" ? x : `${x.op}(${x.inputs.map(input).join(", ")})`);
  return `${claim.op}(${claim.inputs.map(input).join(", ")})`;
}

// Where a claimed figure comes from, as the hover says it.
export function claimSource(claim) {
  const where = claim.pointer != null ? `${claim.source_id} ${claim.pointer}` : `${claim.source_id} = ${formula(claim)}`;
  return claim.kind ? `${where} (${claim.kind})` : where;
}

function figures(text, claims) {
  const parts = text.split(MARKED);
  const out = [];
  for (let i = 0; i < parts.length; i += 3) {
    if (parts[i]) out.push(parts[i]);
    if (i + 2 < parts.length) {
      const claim = claims[Number(parts[i + 1])];
      out.push(h("span", { class: "claim", tabindex: 0, "data-tip": claimSource(claim), "aria-description": claimSource(claim), "data-source": claim.source_id }, parts[i + 2]));
    }
  }
  return out;
}

function inline(text, claims) {
  return text.split(/(\*\*[^*\n]+\*\*|(?<!\w)_[^_\n]+_(?!\w))/).flatMap((part, i) => {
    if (i % 2 === 0) return withCode(part).flatMap((x) => (typeof x === "string" ? figures(x, claims) : [x]));
    const tag = part.startsWith("**") ? "strong" : "em";
    return h(tag, {}, ...figures(part.slice(tag === "strong" ? 2 : 1, tag === "strong" ? -2 : -1), claims));
  });
}

const TABLE_SEPARATOR = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;
const LIST_ITEM = /^\s*([-*•]|\d+\.)\s+/;

function cells(line) {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
}

function tableView(lines, claims) {
  const [head, separator, ...rows] = lines;
  const align = cells(separator).map((c) => (c.endsWith(":") ? (c.startsWith(":") ? "center" : "num") : null));
  const cell = (tag) => (text, i) => h(tag, { class: align[i] }, ...inline(text, claims));
  return h("div", { class: "table-wrap" }, h("table", { class: "md" },
    h("thead", {}, h("tr", {}, ...cells(head).map(cell("th")))),
    h("tbody", {}, ...rows.map((row) => h("tr", {}, ...cells(row).map(cell("td")))))));
}

// One paragraph: runs of table rows, list items and text, each rendered as itself.
function blockView(para, claims) {
  const lines = para.split("\n");
  const out = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i].trim().startsWith("|") && TABLE_SEPARATOR.test(lines[i + 1] || "")) {
      let end = i + 2;
      while (end < lines.length && lines[end].trim().startsWith("|")) end++;
      out.push(tableView(lines.slice(i, end), claims));
      i = end;
    } else if (LIST_ITEM.test(lines[i])) {
      const ordered = /^\s*\d+\./.test(lines[i]);
      const items = [];
      while (i < lines.length && LIST_ITEM.test(lines[i])) items.push(h("li", {}, ...inline(lines[i++].replace(LIST_ITEM, ""), claims)));
      out.push(h(ordered ? "ol" : "ul", {}, ...items));
    } else {
      const text = [];
      while (i < lines.length && !LIST_ITEM.test(lines[i]) && !(lines[i].trim().startsWith("|") && TABLE_SEPARATOR.test(lines[i + 1] || ""))) text.push(lines[i++]);
      out.push(h("p", {}, ...inline(text.join("\n"), claims)));
    }
  }
  return out;
}

// The answer's Markdown as nodes; each claim's figure a highlighted span (claims: answer.claims).
export function answerView(markdown, claims = []) {
  return h("div", { class: "answer", id: "answer" },
    ...marked(markdown, claims).split(/\n{2,}/).flatMap((para) => blockView(para, claims)));
}
