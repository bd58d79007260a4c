// The Documents page: upload files, list them with filters, search them (the matched
// words marked), open a document's blocks and images. Text is only ever set as text nodes.
import { h } from "/tools/static/dom.js";

// `text` with each occurrence of the query's words wrapped in <mark>.
function highlighted(text, query) {
  const words = [...new Set((query.toLowerCase().match(/[\p{L}\p{N}_]+/gu) || []).filter((w) => w.length > 2))];
  if (!words.length) return [text];
  const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const pattern = new RegExp(`(${escaped.join("|")})`, "giu");
  return text.split(pattern).map((part, i) => (i % 2 ? h("mark", {}, part) : part));
}

function blockView(block, query = "") {
  const where = [block.document_title, block.page_number ? `page ${block.page_number}` : "", block.section].filter(Boolean).join(" · ");
  const image = block.block_type === "image" && block.image_url?.startsWith("/api/documents/")
    ? h("img", { src: block.image_url, alt: block.image_caption || "", class: "doc-image" }) : null;
  return h("div", { class: "block" },
    h("div", { class: "muted small" }, where, block.source_id ? h("code", { class: "cite" }, ` ${block.source_id}`) : null,
      block.score !== undefined ? h("span", { class: "muted" }, ` · score ${block.score}`) : null),
    image,
    h("p", {}, ...highlighted(block.content_text, query)));
}

async function fileBase64(file) {
  const bytes = new Uint8Array(await file.arrayBuffer());
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

export default async function documentsPage(app, ctx) {
  const params = new URLSearchParams(location.search);
  const filters = { document_type: params.get("document_type") || "", author: params.get("author") || "" };
  const list = h("tbody", {});
  const table = h("table", { id: "documents" },
    h("thead", {}, h("tr", {}, ...["title", "type", "author", "blocks", "version", "added", "source_id"].map((c) => h("th", {}, c)))), list);
  const opened = h("div", { id: "document" });
  const results = h("div", { id: "search-results" });
  const note = h("div", { id: "upload-note", role: "status" });

  const open = async (documentId) => {
    const { status, data } = await ctx.api(`/api/documents/${encodeURIComponent(documentId)}`, { query: { profile: ctx.state.profile } });
    if (status !== 200) { opened.replaceChildren(h("div", { class: "toast" }, data.error?.message || ctx.detail(data))); return; }
    const doc = data.data.document;
    opened.replaceChildren(h("div", { class: "panel" },
      h("h2", {}, doc.title, " ", h("code", { class: "cite" }, doc.source_id)),
      h("p", { class: "muted" }, data.data.summary),
      ...data.data.blocks.map((b) => blockView({ ...b, document_title: "", source_id: "" }))));
  };

  const load = async () => {
    const query = { ...filters, profile: ctx.state.profile };
    const { status, data } = await ctx.api("/api/documents", { query });
    if (status !== 200) throw new Error(data.error?.message || ctx.detail(data));
    list.replaceChildren(...data.data.documents.map((d) => h("tr", {},
      h("td", {}, h("a", { href: "#", onclick: (e) => { e.preventDefault(); open(d.document_id); } }, d.title)),
      h("td", {}, d.document_type), h("td", {}, d.author || ""), h("td", { class: "num" }, d.blocks),
      h("td", { class: "num" }, d.version), h("td", {}, d.ingested_at.slice(0, 16).replace("T", " ")),
      h("td", {}, h("code", {}, d.source_id)))));
    if (!data.data.documents.length) list.replaceChildren(h("tr", {}, h("td", { colspan: 7, class: "muted" }, "No documents yet: upload one above, or run tooldeck docs add PATH.")));
  };

  const upload = async (event) => {
    event.preventDefault();
    const files = [...event.target.querySelector("input[type=file]").files];
    const lines = [];
    for (const file of files) {
      note.replaceChildren(h("span", { class: "muted" }, `Adding ${file.name}…`));
      const { status, data } = await ctx.api("/api/documents/upload", { method: "POST", body: { name: file.name, content_base64: await fileBase64(file) } });
      lines.push(status === 200 ? `${file.name}: ${data.status} (${data.document.source_id})` : `${file.name}: ${ctx.detail(data)}`);
    }
    note.replaceChildren(...lines.map((l) => h("div", { class: l.includes(": added") || l.includes(": updated") || l.includes(": unchanged") ? "" : "toast" }, l)));
    event.target.reset();
    await load();
  };

  const search = async (event) => {
    event.preventDefault();
    const query = event.target.querySelector("input").value;
    const button = event.target.querySelector("button");
    const body = { query, top_k: 10, ...(filters.document_type ? { filters: { document_type: filters.document_type } } : {}) };
    results.replaceChildren(h("p", { class: "muted", id: "searching" }, `Searching for “${query}”…`));
    button.disabled = true;
    const { data } = await ctx.api("/api/tools/execute/semantic_search", { method: "POST", body, query: { profile: ctx.state.profile } })
      .finally(() => { button.disabled = false; });
    if (data.error) { results.replaceChildren(h("div", { class: "toast" }, data.error.message)); return; }
    results.replaceChildren(h("p", { class: "muted" }, `${data.data.blocks.length} blocks (${data.data.mode})`),
      ...data.data.blocks.map((b) => blockView(b, query)));
  };

  const filterBar = h("form", { class: "filters", onchange: (e) => {
    filters[e.target.name] = e.target.value;
    const next = new URLSearchParams(Object.entries(filters).filter(([, v]) => v));
    history.replaceState(null, "", `${location.pathname}${next.size ? `?${next}` : ""}`);
    load();
  } },
    h("label", {}, "type ", h("select", { name: "document_type" }, ...["", "pdf", "docx", "html", "markdown", "text", "note"].map((t) => h("option", { value: t, selected: filters.document_type === t }, t || "any")))),
    h("label", {}, "author ", h("input", { name: "author", value: filters.author, placeholder: "any" })));

  app.replaceChildren(
    h("div", { class: "panel" }, h("h2", {}, "Add documents"),
      h("form", { id: "upload", onsubmit: upload },
        h("input", { type: "file", multiple: true, required: true, accept: ".pdf,.docx,.html,.htm,.md,.markdown,.txt", "aria-label": "Files" }), " ",
        h("button", { class: "primary" }, "Upload")), note),
    h("div", { class: "panel" }, h("h2", {}, "Search"),
      h("form", { id: "search", onsubmit: search }, h("input", { type: "search", required: true, placeholder: "What are you looking for?", "aria-label": "Search documents" }), " ", h("button", {}, "Search")),
      results),
    h("div", { class: "panel" }, h("h2", {}, "Documents"), filterBar, h("div", { class: "table-wrap" }, table)),
    opened);
  await load();
}
