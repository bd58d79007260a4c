// The Sources page: the user's context sources (user_context), their last fetch, and a
// button that fetches them all (a briefing, through the tool like any call).
import { h } from "/tools/static/dom.js";

export default async function sourcesPage(app, ctx) {
  const body = h("tbody", {});
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
    if (!data.length) body.replaceChildren(h("tr", {}, h("td", { colspan: 7, class: "muted" }, "No sources configured: add [context.finance], [context.calendar], [context.weather], [context.commute] or [context.tasks] to tooldeck.toml.")));
  };
  const refresh = async () => {
    note.replaceChildren(h("span", { class: "muted" }, "Fetching…"));
    const { data } = await ctx.api("/api/tools/execute/user_context", { method: "POST", body: { action: "briefing" }, query: { profile: ctx.state.profile } });
    note.replaceChildren(data.error ? h("div", { class: "toast" }, data.error.message) : h("span", { class: "muted" }, "Fetched."));
    await load();
  };
  app.replaceChildren(h("div", { class: "panel" }, h("h2", {}, "Context sources ", h("button", { id: "refresh-sources", type: "button", onclick: refresh }, "Fetch now")), note,
    h("div", { class: "table-wrap" }, h("table", { id: "sources" },
      h("thead", {}, h("tr", {}, ...["category", "platform", "source_id", "last fetch", "status", "records", "error"].map((c) => h("th", { class: c === "records" ? "num" : "" }, c)))), body))));
  await load();
}
