// The Sources page: the caller's context sources (user_context), their last fetch, a
// button that fetches them all (a briefing, through the tool like any call), and the
// caller's own files: a statement, a calendar or a todo.txt uploaded here serves only
// them. Text is only ever set as text nodes.
import { h } from "/tools/static/dom.js";

export default async function sourcesPage(app, ctx) {
  const body = h("tbody", {});
  const uploads = h("tbody", {});
  const note = h("div", { id: "sources-note", role: "status" });
  const load = async () => {
    const { status, data } = await ctx.api("/api/context/sources");
    if (status !== 200) throw new Error(ctx.detail(data));
    body.replaceChildren(...data.map((s) => h("tr", { "data-source": s.source_id },
      h("td", {}, s.category), h("td", {}, s.platform), h("td", {}, h("code", {}, s.source_id)),
      h("td", {}, s.fetched_at ? s.fetched_at.replace("T", " ") : "not yet"),
      h("td", {}, s.ok === null ? "" : h("span", { class: `badge ${s.ok ? "ok" : "err"}` }, s.ok ? "ok" : "error")),
      h("td", { class: "num" }, s.records ?? ""),
      h("td", {}, s.error || ""))));
    if (!data.length) body.replaceChildren(h("tr", {}, h("td", { colspan: 7, class: "muted" }, "No sources: upload your own below, or add [context.finance], [context.calendar], [context.weather], [context.commute] or [context.tasks] to tooldeck.toml.")));
    const own = await ctx.api("/api/context/uploads");
    uploads.replaceChildren(...(own.status === 200 ? own.data : []).map((f) => h("tr", { "data-upload": `${f.category}/${f.name}` },
      h("td", {}, f.category), h("td", {}, f.name), h("td", { class: "num" }, f.bytes), h("td", {}, f.uploaded_at.replace("T", " ")),
      h("td", {}, h("button", { type: "button", onclick: async () => {
        const r = await ctx.api(`/api/context/uploads/${encodeURIComponent(f.category)}/${encodeURIComponent(f.name)}`, { method: "DELETE" });
        note.replaceChildren(r.status === 200 ? h("span", { class: "muted" }, `Deleted ${f.name}.`) : h("div", { class: "toast" }, ctx.detail(r.data)));
        await load();
      } }, "Delete")))));
  };
  const refresh = async () => {
    note.replaceChildren(h("span", { class: "muted" }, "Fetching…"));
    const { data } = await ctx.api("/api/tools/execute/user_context", { method: "POST", body: { action: "briefing" }, query: { profile: ctx.state.profile } });
    note.replaceChildren(data.error ? h("div", { class: "toast" }, data.error.message) : h("span", { class: "muted" }, "Fetched."));
    await load();
  };
  const category = h("select", { id: "upload-category", "aria-label": "Category" },
    h("option", { value: "finance" }, "finance (OFX/QFX statement)"), h("option", { value: "calendar" }, "calendar (.ics)"), h("option", { value: "tasks" }, "tasks (todo.txt)"));
  const file = h("input", { id: "upload-file", type: "file", "aria-label": "File" });
  const upload = async (event) => {
    event.preventDefault();
    const chosen = file.files[0];
    if (!chosen) return;
    const r = await ctx.api(`/api/context/uploads/${category.value}/${encodeURIComponent(chosen.name)}`, { method: "PUT", body: { content: await chosen.text() } });
    note.replaceChildren(r.status === 200 ? h("span", { class: "muted" }, `Uploaded ${chosen.name}: it serves you only.`) : h("div", { class: "toast" }, ctx.detail(r.data)));
    await load();
  };
  app.replaceChildren(h("div", { class: "panel" }, h("h2", {}, "Context sources ", h("button", { id: "refresh-sources", type: "button", onclick: refresh }, "Fetch now")), note,
    h("div", { class: "table-wrap" }, h("table", { id: "sources" },
      h("thead", {}, h("tr", {}, ...["category", "platform", "source_id", "last fetch", "status", "records", "error"].map((c) => h("th", { class: c === "records" ? "num" : "" }, c)))), body)),
    h("h3", {}, "Your files"),
    h("form", { id: "upload-source", onsubmit: upload }, category, " ", file, " ", h("button", { type: "submit" }, "Upload")),
    h("div", { class: "table-wrap" }, h("table", { id: "uploads" },
      h("thead", {}, h("tr", {}, ...["category", "name", "bytes", "uploaded", ""].map((c) => h("th", {}, c)))), uploads))));
  await load();
}
