// Markdown of an answer, rendered safely for the Chat page and the run view: text nodes
// only (no HTML is ever parsed); **bold**, _italic_, `code`, lists and GFM tables.
import { h } from "./dom.js";
import { withCode } from "./form.js";

function inline(text) {
  return text.split(/(\*\*[^*\n]+\*\*|(?<!\w)_[^_\n]+_(?!\w))/).map((part, i) => {
    if (i % 2 === 0) return withCode(part);
    return part.startsWith("**") ? h("strong", {}, part.slice(2, -2)) : h("em", {}, part.slice(1, -1));
  });
}

const TABLE_SEPARATOR = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;
const LIST_ITEM = /^\s*([-*•]|\d+\.)\s+/;

function cells(line) {
  return line.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
}

function tableView(lines) {
  const [head, separator, ...rows] = lines;
  const align = cells(separator).map((c) => (c.endsWith(":") ? (c.startsWith(":") ? "center" : "num") : null));
  const cell = (tag) => (text, i) => h(tag, { class: align[i] }, ...inline(text));
  return h("div", { class: "table-wrap" }, h("table", { class: "md" },
    h("thead", {}, h("tr", {}, ...cells(head).map(cell("th")))),
    h("tbody", {}, ...rows.map((row) => h("tr", {}, ...cells(row).map(cell("td")))))));
}

// One paragraph: runs of table rows, list items and text, each rendered as itself.
function blockView(para) {
  const lines = para.split("\n");
  const out = [];
  let i = 0;
  while (i < lines.length) {
    if (lines[i].trim().startsWith("|") && TABLE_SEPARATOR.test(lines[i + 1] || "")) {
      let end = i + 2;
      while (end < lines.length && lines[end].trim().startsWith("|")) end++;
      out.push(tableView(lines.slice(i, end)));
      i = end;
    } else if (LIST_ITEM.test(lines[i])) {
      const ordered = /^\s*\d+\./.test(lines[i]);
      const items = [];
      while (i < lines.length && LIST_ITEM.test(lines[i])) items.push(h("li", {}, ...inline(lines[i++].replace(LIST_ITEM, ""))));
      out.push(h(ordered ? "ol" : "ul", {}, ...items));
    } else {
      const text = [];
      while (i < lines.length && !LIST_ITEM.test(lines[i]) && !(lines[i].trim().startsWith("|") && TABLE_SEPARATOR.test(lines[i + 1] || ""))) text.push(lines[i++]);
      out.push(h("p", {}, ...inline(text.join("\n"))));
    }
  }
  return out;
}

export function answerView(markdown) {
  return h("div", { class: "answer", id: "answer" }, ...markdown.split(/\n{2,}/).flatMap(blockView));
}
