// The Modules page: each module's active version, tools and description, its versions,
// its drafts with their last validation (each check and its output) and diff, and its
// history. Changes go through the module_admin tool like any call: an install, a
// rollback or an enable waits for a person on the Approvals page, then runs when its
// button is pressed again. Text is only ever set as text nodes.
import { h } from "/tools/static/dom.js";

const badge = (passed) => passed === null || passed === undefined
  ? h("span", { class: "badge" }, "not validated")
  : h("span", { class: `badge ${passed ? "ok" : "err"}` }, passed ? "passed" : "failed");

export default async function modulesPage(app, ctx) {
  const note = h("div", { id: "modules-note", role: "status" });
  const detail = h("div", { id: "module-detail" });
  const body = h("tbody", {});

  const admin = async (action, args) => {
    const { status, data } = await ctx.api("/api/tools/execute/module_admin", { method: "POST", body: { action, ...args }, query: { profile: ctx.state.profile } });
    if (status === 409 && data.error?.type === "confirmation_required") {
      note.replaceChildren(h("div", { class: "toast" }, `${action} waits for a person: approve it on `, h("a", { href: "/tools/approvals", "data-link": true }, "Approvals"), ", then press the button again."));
      return null;
    }
    if (data.error) { note.replaceChildren(h("div", { class: "toast" }, data.error.message)); return null; }
    return data.data;
  };
  // a change that ran: say so and show the modules as they are now
  const change = async (action, args, done) => {
    const result = await admin(action, args);
    if (result) { note.replaceChildren(h("div", { class: "toast" }, done(result))); await load(args.module_id); }
  };

  const showDraft = async (module, draft) => {
    const { data } = await ctx.api(`/api/modules/${encodeURIComponent(module.module_id)}/drafts/${encodeURIComponent(draft.draft_id)}/diff`);
    const checks = draft.checks.map((c) => h("tr", { "data-check": c.name },
      h("td", {}, c.name), h("td", {}, badge(c.passed)), h("td", {}, c.output ? h("pre", { class: "small" }, c.output) : "")));
    const validate = h("button", { type: "button", onclick: async () => {
      note.replaceChildren(h("span", { class: "muted" }, "Validating in the sandbox…"));
      if (await admin("validate_draft", { module_id: module.module_id, draft_id: draft.draft_id })) { note.replaceChildren(); await load(module.module_id, draft.draft_id); }
    } }, "Validate");
    const install = draft.passed ? h("button", { type: "button", id: "install-draft", onclick: () => change("promote_draft",
      { module_id: module.module_id, draft_id: draft.draft_id }, (r) => `${r.module_id} ${r.version_id} is active`) }, "Install") : "";
    detail.replaceChildren(h("div", { class: "panel" },
      h("h3", {}, `${module.module_id} · draft ${draft.draft_id} `, badge(draft.passed), " ", validate, " ", install),
      checks.length ? h("table", { id: "checks" }, h("thead", {}, h("tr", {}, h("th", {}, "check"), h("th", {}, "result"), h("th", {}, "output"))), h("tbody", {}, ...checks))
        : h("p", { class: "muted" }, "Not validated since its last edit."),
      h("h4", {}, "Diff from the active version"), h("pre", { id: "draft-diff", class: "small" }, data?.diff || "(no change)")));
  };

  const load = async (openModule, openDraft) => {
    const { status, data } = await ctx.api("/api/modules");
    if (status !== 200) throw new Error(ctx.detail(data));
    body.replaceChildren(...data.map((m) => h("tr", { "data-module": m.module_id },
      h("td", {}, m.module_id, m.description ? h("div", { class: "small muted" }, m.description) : ""),
      h("td", {}, m.active_version ? h("code", {}, m.active_version) : h("span", { class: "muted" }, m.versions.length ? "disabled" : "not installed"),
        m.active_version ? h("button", { type: "button", onclick: () => change("disable", { module_id: m.module_id }, () => `${m.module_id} disabled`) }, "Disable")
          : m.versions.length ? h("button", { type: "button", onclick: () => change("enable", { module_id: m.module_id }, (r) => `${r.module_id} ${r.version_id} is active`) }, "Enable") : ""),
      h("td", { "data-tools": true }, ...m.tools.map((t) => h("div", {}, h("code", {}, t)))),
      h("td", {}, ...m.versions.map((v) => h("div", {}, h("code", {}, v.version_id), ` ${v.installed_by || ""} ${(v.installed_at || "").slice(0, 19).replace("T", " ")} `,
        v.active ? h("span", { class: "badge ok" }, "active") : h("button", { type: "button", onclick: () => change("rollback_version", { module_id: m.module_id, target_version_id: v.version_id }, (r) => `${r.module_id} ${r.version_id} is active`) }, "Roll back to this")))),
      h("td", {}, ...m.drafts.map((d) => h("div", {}, h("a", { href: "#", onclick: (e) => { e.preventDefault(); showDraft(m, d); } }, d.draft_id), " ", badge(d.passed)))),
      h("td", {}, ...m.history.slice(-3).map((e) => h("div", { class: "small muted" }, `${e.action} ${e.version_id || ""} by ${e.by}`))))));
    if (!data.length) body.replaceChildren(h("tr", {}, h("td", { colspan: 6, class: "muted" }, "No modules yet: tooldeck modules new NAME, module_pipeline build, or module_admin create_draft.")));
    const module = data.find((m) => m.module_id === openModule);
    const draft = module?.drafts.find((d) => d.draft_id === openDraft);
    if (draft) await showDraft(module, draft);
  };

  app.replaceChildren(h("div", { class: "panel" }, h("h2", {}, "Modules"), note,
    h("div", { class: "table-wrap" }, h("table", { id: "modules" },
      h("thead", {}, h("tr", {}, ...["module", "active", "tools", "versions", "drafts", "history"].map((c) => h("th", {}, c)))), body))), detail);
  await load();
}
