// The tools UI: pages rendered from /api/* (catalog, execute, audit, stats, approvals).
import { h } from "./dom.js";
import { buildForm, withCode } from "./form.js";
import { chatPage } from "./chat.js";
import { metricsPage } from "./metrics.js";
import { runPage } from "./runs.js";

const app = document.getElementById("app");
const profileSelect = document.getElementById("profile");
const state = { catalog: null, resources: null, profile: localStorage.getItem("tooldeck.profile") || "" };

// ---- API ------------------------------------------------------------------------
async function api(path, { method = "GET", body, headers = {}, query = {} } = {}) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== "") url.searchParams.set(k, v);
  const key = localStorage.getItem("tooldeck.apiKey");
  const init = { method, headers: { ...headers, ...authHeaders() } };
  if (body !== undefined) { init.body = typeof body === "string" ? body : JSON.stringify(body); init.headers["content-type"] = "application/json"; }
  const response = await fetch(url, init);
  if (response.status === 401) {
    const refused = key ? "The key you gave was refused: check the server's server.api_key." : "";
    if (await askKey(refused)) return api(path, { method, body, headers, query });
    throw new Error(refused || "this server needs its API key");
  }
  const data = await response.json().catch(() => ({ detail: `HTTP ${response.status}` }));
  return { status: response.status, data };
}

function authHeaders() {
  const key = localStorage.getItem("tooldeck.apiKey");
  return key ? { authorization: `Bearer ${key}` } : {};
}

function askKey(refused = "") {
  const dialog = document.getElementById("key-dialog");
  const input = document.getElementById("key-input");
  const note = document.getElementById("key-error");
  note.textContent = refused; note.hidden = !refused;
  input.value = "";
  return new Promise((resolve) => {
    dialog.addEventListener("close", () => {
      if (dialog.returnValue === "ok" && input.value) { localStorage.setItem("tooldeck.apiKey", input.value); resolve(true); } else resolve(false);
    }, { once: true });
    dialog.showModal();
  });
}

const detail = (data) => (typeof data?.detail === "string" ? data.detail : JSON.stringify(data?.detail ?? data));

// ---- the packs' pages ---------------------------------------------------------------
// Each pack may add pages (PackParts.console): listed by the server, linked in the
// navigation before History, loaded as ES modules when opened.
const packPages = fetch("/tools/pack/pages.json").then((r) => (r.ok ? r.json() : [])).catch(() => []);
packPages.then((pages) => {
  const history = document.querySelector('[data-nav="history"]');
  for (const p of pages) history.before(h("a", { href: `/tools/${p.name}`, "data-link": true, "data-nav": p.name }, p.title));
});

// ---- routing ----------------------------------------------------------------------
function navigate(path) { history.pushState(null, "", path); render(); }
document.addEventListener("click", (event) => {
  const a = event.target.closest("a[data-link]");
  if (!a || event.metaKey || event.ctrlKey || event.shiftKey) return;
  event.preventDefault(); navigate(a.getAttribute("href"));
});
window.addEventListener("popstate", render);
profileSelect.addEventListener("change", () => {
  state.profile = profileSelect.value; localStorage.setItem("tooldeck.profile", state.profile);
  state.catalog = null; state.resources = null; render();
});

async function render() {
  const path = location.pathname.replace(/\/+$/, "");
  const page = /^\/tools\/[tr]\//.test(path) ? "tools" : (path.split("/")[2] || "tools");
  const pack = (await packPages).find((p) => p.name === page); // its link is in the nav now
  const nav = page === "runs" ? "history" : page; // a run is opened from History or Chat
  document.querySelectorAll("[data-nav]").forEach((a) => a.classList.toggle("active", a.dataset.nav === nav));
  if (page === "metrics" || page === "approvals" || page === "chat" || pack) loadCatalog().catch(() => {}); // fills the profile selector
  try {
    if (page === "history") await historyPage();
    else if (page === "runs") await runPage(app, { api, detail, authHeaders }, path.split("/").slice(3).join("/"));
    else if (page === "metrics") await metricsPage(app, { api, detail, filterSelect });
    else if (page === "approvals") await approvalsPage();
    else if (page === "chat") await chatPage(app, { api, detail, state, authHeaders, refreshPending });
    else if (pack) await (await import(pack.script)).default(app, { api, detail, state });
    else if (path.startsWith("/tools/r/")) await toolsPage(null, decodeURIComponent(path.slice(9)));
    else await toolsPage(path.startsWith("/tools/t/") ? decodeURIComponent(path.slice(9)) : null);
  } catch (error) {
    app.replaceChildren(h("div", { class: "panel error-box" }, String(error.message || error)));
  }
  performance.mark("tooldeck:rendered"); // benchmarks/ui_load.py reads when the page was drawn
  refreshPending();
}

async function loadCatalog() {
  if (state.catalog) return state.catalog;
  let { status, data } = await api("/api/catalog", { query: { profile: state.profile } });
  if (status === 404 && state.profile) { // a profile that no longer exists
    state.profile = ""; localStorage.removeItem("tooldeck.profile");
    ({ status, data } = await api("/api/catalog"));
  }
  if (status !== 200) throw new Error(detail(data));
  profileSelect.replaceChildren(h("option", { value: "" }, "all tools"),
    ...data.profiles.map((p) => h("option", { value: p.name, title: p.description }, p.name)));
  profileSelect.value = state.profile;
  state.catalog = data;
  return data;
}

function toolBadges(tool) {
  const a = tool.annotations || {};
  return h("span", { class: "badges" },
    !tool.visible ? h("span", { class: "badge", title: "Not in this profile's view" }, "hidden") : null,
    tool.requires_confirmation ? h("span", { class: "badge warn", title: "Needs a human's approval" }, "confirm") : null,
    !tool.requires_confirmation && tool.confirm_actions?.length ? h("span", { class: "badge warn", title: `Confirmation for: ${tool.confirm_actions.join(", ")}` }, "confirm: some actions") : null,
    tool.unavailable ? h("span", { class: "badge err", title: tool.unavailable }, "unavailable") : null,
    a.read_only ? h("span", { class: "badge ok" }, "read-only") : null,
    a.destructive ? h("span", { class: "badge err" }, "destructive") : null);
}

// The profile's MCP resources and prompts (the packs' and the upstream servers'), asked
// once per profile (the promise is kept); a failure leaves the lists empty, with the
// reason, and the tools still shown.
function loadResources() {
  state.resources ??= (async () => {
    const query = { profile: state.profile };
    const [listed, prompts] = await Promise.all([api("/api/resources", { query }), api("/api/prompts", { query })]);
    const failed = [listed, prompts].find((r) => r.status !== 200);
    return {
      resources: listed.status === 200 ? listed.data.resources : [],
      templates: listed.status === 200 ? listed.data.templates : [],
      prompts: prompts.status === 200 ? prompts.data.prompts : [],
      error: failed ? detail(failed.data) : null,
    };
  })().catch((error) => { state.resources = null; throw error; }); // asked again next time
  return state.resources;
}

function resourceGroups(listed, uri) {
  const { resources, templates, prompts, error } = listed;
  if (!resources.length && !templates.length && !prompts.length && !error) return [];
  return [
    h("div", { class: "group", id: "resources" },
      h("h3", {}, "Resources ", h("span", { class: "muted" }, `(${resources.length})`)),
      error ? h("div", { class: "error" }, error) : null,
      ...resources.map((r) => h("a", { href: `/tools/r/${encodeURIComponent(r.uri)}`, "data-link": true, "data-resource": r.uri,
        title: r.uri, class: `tool-link${r.uri === uri ? " current" : ""}` }, r.name || r.uri, h("span", { class: "badges" }, h("span", { class: "badge" }, r.server)))),
      ...templates.map((t) => h("div", { class: "tool-link muted", title: t.description || "" }, t.uriTemplate))),
    prompts.length ? h("div", { class: "group", id: "prompts" },
      h("h3", {}, "Prompts ", h("span", { class: "muted" }, `(${prompts.length})`)),
      ...prompts.map((p) => h("div", { class: "tool-link", "data-prompt": p.name, title: p.description || "" }, p.name,
        h("span", { class: "badges" }, ...(p.arguments || []).map((a) => h("span", { class: "badge" }, a.name)))))) : null,
  ];
}

async function resourceDetail(uri) {
  const known = (await loadResources()).resources.find((r) => r.uri === uri);
  const { status, data } = await api("/api/resources/read", { query: { uri, profile: state.profile } });
  const head = [h("h1", {}, known?.name || uri), h("p", { class: "muted" }, h("code", {}, uri), known ? ` · ${known.server}` : "")];
  if (status !== 200) return h("div", { class: "panel" }, ...head, h("div", { class: "error-box", id: "resource-error" }, detail(data)));
  // text is shown as text, never as markup: it comes from another server
  const parts = data.contents.map((c) => c.text !== undefined
    ? h("pre", { class: "code resource-text" }, c.text)
    : h("p", { class: "muted" }, `${c.mimeType || "binary"} · ${Math.round((c.blob || "").length * 3 / 4).toLocaleString()} bytes (not shown)`));
  return h("div", { class: "panel", id: "resource" }, ...head, ...parts);
}

// ---- tools ------------------------------------------------------------------------
async function toolsPage(name, uri = null) {
  const catalog = await loadCatalog();
  const all = catalog.providers.flatMap((p) => p.tools);
  const search = h("input", { type: "search", placeholder: "Search tools…", "aria-label": "Search tools", value: sessionStorage.getItem("tooldeck.search") || "" });
  const groups = h("div", {});
  const drawList = () => {
    const q = search.value.trim().toLowerCase();
    sessionStorage.setItem("tooldeck.search", search.value);
    groups.replaceChildren(...catalog.providers.map((p) => {
      const tools = p.tools.filter((t) => !q || t.name.toLowerCase().includes(q) || t.description.toLowerCase().includes(q));
      if (!tools.length && (q || !p.error)) return null;
      return h("div", { class: "group" },
        h("h3", {}, p.kind === "mcp" ? `MCP · ${p.id}` : "local pack", " ", h("span", { class: "muted" }, `(${tools.length})`)),
        p.error ? h("div", { class: "error" }, p.error) : null,
        ...tools.map((t) => h("a", { href: `/tools/t/${encodeURIComponent(t.name)}`, "data-link": true, "data-tool": t.name,
          class: `tool-link${t.visible ? "" : " hidden-tool"}${t.name === name ? " current" : ""}` }, t.name, toolBadges(t))));
    }));
  };
  search.addEventListener("input", drawList);
  drawList();
  const sidebar = h("aside", { class: "panel sidebar" }, search, groups);
  // the tools first: an upstream server slow to list its resources must not hold them
  loadResources().then((listed) => sidebar.append(...resourceGroups(listed, uri))).catch(() => {});
  const tool = name ? all.find((t) => t.name === name) : null;
  let mainPanel;
  if (uri) mainPanel = await resourceDetail(uri);
  else if (name && !tool) {
    const near = closest(name, all.map((t) => t.name));
    mainPanel = h("div", { class: "panel error-box", id: "no-tool" }, `No tool named ${name}.`,
      near.length ? h("p", {}, "Did you mean ", ...near.flatMap((n, i) => [i ? ", " : "", h("a", { href: `/tools/t/${encodeURIComponent(n)}`, "data-link": true }, n)]), "?") : null);
  }
  else if (tool) mainPanel = toolDetail(tool);
  else {
    const visible = all.filter((t) => t.visible).length;
    mainPanel = h("div", { class: "panel" }, h("h1", {}, "Tools"),
      h("p", {}, `${all.length} tools from ${catalog.providers.length} provider(s); `,
        state.profile ? `profile ${state.profile} sees ${visible}.` : "no profile selected: every tool is shown."),
      h("p", { class: "muted" }, "Pick a tool to see its schemas and run it through the same provider stack as the API (validation, policies, confirmation, audit)."));
  }
  app.replaceChildren(h("div", { class: "layout" }, sidebar, h("section", {}, mainPanel)));
}

function toolDetail(tool) {
  const prefill = JSON.parse(sessionStorage.getItem("tooldeck.prefill") || "null");
  sessionStorage.removeItem("tooldeck.prefill");
  let args = prefill && prefill.tool === tool.name ? prefill.arguments : {};
  let mode = "form";
  let form = buildForm(tool.input_schema, args);
  const formHolder = h("div", {}, form.element);
  const raw = h("textarea", { class: "code", rows: 10, "aria-label": "Arguments (JSON)", id: "raw-json" });
  const rawHolder = h("div", { hidden: true }, raw);
  const resultHolder = h("div", { id: "result" });
  const tabs = h("div", { class: "tabs" });
  const setMode = (next) => {
    if (next === mode) return;
    if (next === "raw") raw.value = JSON.stringify(form.value(), null, 2);
    else {
      try { args = JSON.parse(raw.value || "{}"); } catch (e) { resultHolder.replaceChildren(h("div", { class: "toast" }, `The JSON does not parse: ${e.message}`)); return; }
      form = buildForm(tool.input_schema, args); formHolder.replaceChildren(form.element);
    }
    mode = next; formHolder.hidden = mode !== "form"; rawHolder.hidden = mode !== "raw";
    [...tabs.children].forEach((b) => b.classList.toggle("active", b.dataset.mode === mode));
  };
  tabs.append(h("button", { type: "button", class: "active", "data-mode": "form", onclick: () => setMode("form") }, "Form"),
    h("button", { type: "button", "data-mode": "raw", onclick: () => setMode("raw") }, "Raw JSON"));
  const run = h("button", { type: "submit", class: "primary", id: "run" }, "Run");
  const submit = async (event) => {
    event.preventDefault();
    const body = mode === "raw" ? raw.value || "{}" : JSON.stringify(form.value());
    run.disabled = true; run.textContent = "Running…";
    try { resultHolder.replaceChildren(await execute(tool.name, body)); }
    catch (error) { resultHolder.replaceChildren(h("div", { class: "error-box" }, String(error.message || error))); }
    finally { run.disabled = false; run.textContent = "Run"; }
  };
  const arguments_ = () => (mode === "raw" ? raw.value || "{}" : JSON.stringify(form.value() ?? {}));
  // The same call from a terminal; the text is also kept in data-copied (for tests and
  // for browsers that refuse clipboard access).
  const copyCall = async (button, kind) => {
    const quoted = (text) => `'${text.replace(/'/g, "'\\''")}'`;
    // A name from an MCP server may hold anything: quoted unless plainly safe, so a
    // pasted command runs only tooldeck.
    const word = (text) => (/^[A-Za-z0-9_][A-Za-z0-9_.\/:=-]*$/.test(text) ? text : quoted(text));
    const profile = state.profile ? `?profile=${encodeURIComponent(state.profile)}` : "";
    const text = kind === "curl"
      ? `curl -X POST -H 'content-type: application/json' ${location.origin}/api/tools/execute/${encodeURIComponent(tool.name)}${profile} -d ${quoted(arguments_())}`
      : `tooldeck call ${word(tool.name)}${state.profile ? ` -p ${word(state.profile)}` : ""} --args ${quoted(arguments_())}`;
    button.dataset.copied = text;
    try { await navigator.clipboard.writeText(text); button.textContent = "Copied"; }
    catch { button.textContent = "Copy failed: select it below"; resultHolder.replaceChildren(h("pre", {}, text)); }
  };
  const a = tool.annotations || {};
  const annotations = Object.entries(a).filter(([, v]) => v !== null && v !== undefined);
  return h("div", {},
    h("div", { class: "panel" },
      h("h1", {}, tool.name, " ", toolBadges(tool)),
      h("p", {}, ...withCode(tool.description)),
      h("dl", { class: "kv" },
        h("dt", {}, "version"), h("dd", {}, tool.version),
        h("dt", {}, "provider"), h("dd", {}, tool.server_id ? `MCP server ${tool.server_id}` : (tool.provider || "local")),
        tool.source_id ? [h("dt", {}, "source_id"), h("dd", {}, h("code", {}, tool.source_id))] : null,
        tool.timeout_s ? [h("dt", {}, "timeout"), h("dd", {}, `${tool.timeout_s} s`)] : null,
        annotations.length ? [h("dt", {}, "annotations"), h("dd", {}, annotations.map(([k, v]) => `${k}=${v}`).join(", "))] : null,
        tool.tags?.length ? [h("dt", {}, "tags"), h("dd", {}, tool.tags.join(", "))] : null),
      !tool.visible ? h("p", { class: "toast" }, `Profile ${state.profile} does not see this tool; running it here answers not_found.`) : null),
    h("form", { class: "panel", onsubmit: submit }, h("h2", {}, "Arguments"), tabs, formHolder, rawHolder,
      h("div", { class: "actions" }, run,
        h("button", { type: "button", id: "copy-curl", onclick: (e) => copyCall(e.target, "curl") }, "Copy as curl"),
        h("button", { type: "button", id: "copy-cli", onclick: (e) => copyCall(e.target, "cli") }, "Copy as CLI"),
        h("span", { class: "muted" }, state.profile ? `as profile ${state.profile}` : "no profile"))),
    resultHolder,
    h("div", { class: "panel" }, h("h2", {}, "Schemas"),
      h("details", {}, h("summary", {}, "Input schema"), h("pre", {}, JSON.stringify(tool.input_schema, null, 2))),
      tool.output_schema ? h("details", {}, h("summary", {}, "Output schema"), h("pre", {}, JSON.stringify(tool.output_schema, null, 2))) : null));
}

async function execute(name, body, { user = "ui", profile = state.profile } = {}) {
  const headers = user && user !== "anonymous" ? { "x-user": user } : {};
  const { status, data } = await api(`/api/tools/execute/${encodeURIComponent(name)}`, { method: "POST", body, headers, query: { profile } });
  if (!data || !data.status) return h("div", { class: "panel error-box" }, `HTTP ${status}: ${detail(data)}`);
  return resultView(data, () => execute(name, body, { user, profile }));
}

function resultView(result, repeat) {
  const m = result.metadata || {};
  const error = result.error;
  // a call waiting for a person is a question to you, not a failure: the model-directed
  // text goes under "what the model is told"
  const asking = error?.type === "confirmation_required" && error.details?.approval_id && repeat;
  const details = error?.details && Object.keys(error.details).length
    ? h("details", {}, h("summary", {}, "details"), h("pre", {}, JSON.stringify(error.details, null, 2))) : null;
  const panel = h("div", { class: `panel result ${asking ? "asking" : result.status}`, "data-status": result.status },
    h("h2", {}, "Result ", asking
      ? h("span", { class: "badge warn", id: "result-status" }, "needs your approval")
      : h("span", { class: `badge ${result.status === "success" ? "ok" : "err"}`, id: "result-status" }, result.status),
      error && !asking ? h("span", { class: "badge err", id: "error-type" }, ` ${error.type}`) : null),
    error && !asking ? h("div", { class: "error-box", id: "error-message" }, error.message, details) : null,
    asking ? h("details", { id: "error-message" }, h("summary", {}, "What the model is told"), h("p", {}, error.message), details) : null,
    h("dl", { class: "kv", id: "provenance" },
      h("dt", {}, "source_id"), h("dd", {}, result.source_id ? h("code", {}, result.source_id) : "—"),
      h("dt", {}, "as_of"), h("dd", {}, result.as_of || "—"),
      h("dt", {}, "duration"), h("dd", {}, m.duration_ms != null ? `${m.duration_ms.toFixed(2)} ms` : "—"),
      h("dt", {}, "attempts"), h("dd", {}, m.attempts ?? "—"),
      h("dt", {}, "request id"), h("dd", {}, h("code", {}, m.request_id || "—")),
      h("dt", {}, "tool"), h("dd", {}, `${m.tool_name || ""} ${m.tool_version ? "v" + m.tool_version : ""} ${m.provider ? "· " + m.provider : ""}`)));
  if (error?.type === "confirmation_required" && error.details?.approval_id && repeat) panel.append(confirmBox(error.details, panel, repeat));
  if (result.data !== null && result.data !== undefined) panel.append(h("h2", {}, "Data"), dataView(result.data));
  if (result.output) panel.append(h("details", {}, h("summary", {}, "Output (what a model sees)"), h("pre", {}, result.output)));
  for (const art of result.artifacts || []) {
    panel.append(h("div", { class: "artifact" }, art.kind === "image" || (art.mime_type || "").startsWith("image/")
      ? h("img", { src: art.uri, alt: art.name || "artifact" })
      : h("a", { href: art.uri, target: "_blank", rel: "noopener" }, art.name || art.uri)));
  }
  return panel;
}

function confirmBox(request, panel, repeat) {
  const decide = async (verdict) => {
    const body = verdict === "approve" ? { approver: "ui" } : { approver: "ui", message: "denied in the tools UI" };
    const { status, data } = await api(`/api/approvals/${request.approval_id}/${verdict}`, { method: "POST", body });
    if (status !== 200) { box.append(h("div", { class: "toast" }, detail(data))); return; }
    panel.replaceWith(await repeat());
  };
  const box = h("div", { class: "confirm-box" },
    h("p", {}, h("strong", {}, `Run ${request.tool} with these arguments?`)),
    request.reason ? h("p", { class: "muted" }, request.reason) : null,
    h("pre", {}, JSON.stringify(request.arguments, null, 2)),
    h("div", { class: "actions" }, h("button", { type: "button", class: "primary", onclick: () => decide("approve") }, "Approve & run"),
      h("button", { type: "button", class: "danger", onclick: () => decide("deny") }, "Deny")));
  return box;
}

function isRecordList(v) { return Array.isArray(v) && v.length > 0 && v.every((x) => x && typeof x === "object" && !Array.isArray(x)); }
function cell(v) { return v === null || v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v); }

function dataView(data, depth = 0) {
  if (isRecordList(data)) {
    const keys = [...new Set(data.flatMap((r) => Object.keys(r)))];
    return h("table", { class: "data" }, h("thead", {}, h("tr", {}, ...keys.map((k) => h("th", {}, k)))),
      h("tbody", {}, ...data.map((r) => h("tr", {}, ...keys.map((k) => h("td", { class: typeof r[k] === "number" ? "num" : "" }, cell(r[k])))))));
  }
  if (data && typeof data === "object" && !Array.isArray(data) && depth === 0) {
    const dl = h("dl", { class: "kv" });
    for (const [k, v] of Object.entries(data)) dl.append(h("dt", {}, k), h("dd", {}, isRecordList(v) || (v && typeof v === "object") ? dataView(v, depth + 1) : cell(v)));
    return h("div", {}, dl, h("details", {}, h("summary", {}, "JSON"), h("pre", {}, JSON.stringify(data, null, 2))));
  }
  return typeof data === "object" ? h("pre", {}, JSON.stringify(data, null, 2)) : h("div", {}, String(data));
}

// A labelled <select> bound to the query parameter `name` of this page: a change reloads
// the page with the new value ("" or `fallback` leaves the parameter out).
function filterSelect(name, options, fallback = "") {
  const s = h("select", { name, "aria-label": name }, ...options.map(([v, t]) => h("option", { value: v }, t)));
  s.value = new URLSearchParams(location.search).get(name) || fallback;
  s.addEventListener("change", () => {
    const q = new URLSearchParams(location.search);
    if (s.value && s.value !== fallback) q.set(name, s.value); else q.delete(name);
    navigate(`${location.pathname}${q.size ? "?" + q : ""}`);
  });
  return h("label", {}, name, s);
}

// ---- history ----------------------------------------------------------------------
// Up to three names closest to `name` (edit distance, a prefix or a part counts too).
function closest(name, names) {
  const distance = (a, b) => {
    const row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      let previous = row[0]; row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const kept = row[j];
        row[j] = Math.min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
        previous = kept;
      }
    }
    return row[b.length];
  };
  const wanted = name.toLowerCase();
  return names
    .map((n) => ({ n, d: n.toLowerCase().includes(wanted) || wanted.includes(n.toLowerCase()) ? 0 : distance(wanted, n.toLowerCase()) }))
    .filter(({ n, d }) => d <= Math.max(2, Math.floor(n.length / 3)))
    .sort((a, b) => a.d - b.d || a.n.localeCompare(b.n)).slice(0, 3).map(({ n }) => n);
}

async function historyPage() {
  const params = new URLSearchParams(location.search);
  const filters = { tool: params.get("tool") || "", status: params.get("status") || "", profile: params.get("profile") ?? "", since: params.get("since") || "",
    run: params.get("run") || "", session: params.get("session") || "" };
  const page = (before) => api("/api/audit", { query: { ...filters, before_id: before, limit: 50 } });
  const [catalog, first] = await Promise.all([loadCatalog(), page()]); // in parallel
  const tools = catalog.providers.flatMap((p) => p.tools.map((t) => t.name)).sort();
  const bar = h("div", { class: "filters" },
    filterSelect("tool", [["", "any"], ...tools.map((t) => [t, t])]),
    filterSelect("status", [["", "any"], ["success", "success"], ["error", "error"]]),
    filterSelect("profile", [["", "any"], ...catalog.profiles.map((p) => [p.name, p.name])]),
    filterSelect("since", [["", "all time"], ["15m", "last 15 min"], ["1h", "last hour"], ["24h", "last 24 h"], ["7d", "last 7 days"]]));
  const body = h("tbody", {});
  const more = h("button", { type: "button", hidden: true }, "Older calls");
  const table = h("table", { id: "history" }, h("thead", {}, h("tr", {}, ...["time", "tool", "status", "error", "ms", "profile", "user", "source_id"].map((c) => h("th", { class: c === "ms" ? "num" : WIDE.has(c) ? "wide" : "" }, c)))), body);
  const load = async (before, response) => {
    const { status, data } = response || (await page(before));
    if (status !== 200) throw new Error(detail(data));
    for (const r of data.records) body.append(...historyRows(r));
    more.hidden = !data.next_before_id;
    more.onclick = () => load(data.next_before_id);
    if (!body.children.length) body.append(h("tr", {}, h("td", { colspan: 8, class: "muted" }, "No calls match.")));
  };
  app.replaceChildren(h("div", { class: "panel" }, h("h1", {}, "History"), bar), h("div", { class: "panel" }, table, h("div", { class: "actions" }, more)));
  await load(undefined, first);
}

// A call made in a chat run or an MCP session links to that run's view.
function groupLink(r) {
  const [label, href] = r.run_id ? ["run", `/tools/runs/${encodeURIComponent(r.run_id)}`]
    : r.session_id ? ["session", `/tools/runs/session/${encodeURIComponent(r.session_id)}`] : [null, null];
  if (!label) return null;
  const link = h("a", { href, "data-link": true, class: "group-link", title: `all calls of this ${label}` }, label);
  link.addEventListener("click", (e) => e.stopPropagation()); // not the row's own toggle
  return [" ", link];
}

// Today's calls by their time alone (a phone has room for time, tool and status).
function shortTime(when) {
  return when.toDateString() === new Date().toDateString() ? when.toLocaleTimeString() : when.toLocaleString();
}

const WIDE = new Set(["error", "profile", "user", "source_id"]); // hidden on a phone; in the row's details

function historyRows(r) {
  const when = new Date(r.created_at);
  const row = h("tr", { class: "clickable", "data-id": r.id, tabindex: 0, "aria-expanded": "false" },
    h("td", { title: when.toLocaleString() }, shortTime(when)), h("td", {}, r.tool_name, groupLink(r)),
    h("td", {}, h("span", { class: `badge ${r.status === "success" ? "ok" : "err"}` }, r.status)),
    h("td", { title: r.error_message || "", class: "wide" }, r.error_type || ""), h("td", { class: "num" }, r.duration_ms != null ? r.duration_ms.toFixed(1) : ""),
    h("td", { class: "wide" }, r.profile || ""), h("td", { class: "wide" }, r.user || ""), h("td", { class: "wide" }, r.source_id ? h("code", {}, r.source_id) : ""));
  const holder = h("td", { colspan: 8 });
  const expanded = h("tr", { hidden: true }, holder);
  row.addEventListener("keydown", (event) => { // Enter or Space opens it, as a click does
    if (event.key === "Enter" || event.key === " ") { event.preventDefault(); row.click(); }
  });
  row.addEventListener("click", async () => {
    expanded.hidden = !expanded.hidden;
    row.setAttribute("aria-expanded", String(!expanded.hidden));
    if (expanded.hidden || holder.childElementCount) return;
    const { data } = await api(`/api/audit/${r.id}`);
    holder.append(h("div", { class: "layout two" },
      h("div", {}, h("h2", {}, "Arguments"), h("pre", {}, JSON.stringify(data.arguments, null, 2))),
      h("div", {}, h("h2", {}, data.error_type ? `Error: ${data.error_type}` : "Data"),
        h("pre", {}, data.error_type ? `${data.error_message}\n${data.error_details ? JSON.stringify(data.error_details, null, 2) : ""}` : JSON.stringify(data.data, null, 2)))),
      h("div", { class: "actions" }, h("button", { type: "button", class: "primary", onclick: (e) => {
        e.stopPropagation();
        sessionStorage.setItem("tooldeck.prefill", JSON.stringify({ tool: r.tool_name, arguments: data.arguments }));
        navigate(`/tools/t/${encodeURIComponent(r.tool_name)}`);
      } }, "Re-run"), h("span", { class: "muted" }, `request ${r.request_id || "—"} · attempts ${r.attempts ?? "—"} · ${r.provider || ""}`)));
  });
  return [row, expanded];
}

// ---- metrics ----------------------------------------------------------------------

// ---- approvals --------------------------------------------------------------------
// A chat run's pending call is an approval too; it is shown (and decided) with its run.
const notOfRuns = (approvals) => approvals.filter((a) => !(a.channel || "").startsWith("run:"));

// A link an MCP client opened for its user (URL-mode elicitation):
// /tools/approvals#approval=<id>&token=<secret>. The secret stays in the fragment (never
// sent in a URL) and goes in a header or body; it decides that one approval only.
async function linkedApproval() {
  const link = new URLSearchParams(location.hash.slice(1));
  const id = link.get("approval"), token = link.get("token");
  if (!id || !token) return null;
  const path = `/api/approvals/${encodeURIComponent(id)}`;
  const { status, data } = await api(path, { headers: { "x-approval-token": token } });
  if (status !== 200) {
    return h("div", { class: "panel", "data-linked": id }, h("h2", {}, "This approval link does not work"),
      h("p", { class: "muted" }, `${detail(data)}. It may have expired; ask the client to try the call again.`));
  }
  const out = h("div", {});
  const reason = h("input", { type: "text", placeholder: "Reason (shown to the model)", "aria-label": "Reason" });
  const decide = async (verdict) => {
    const body = verdict === "approve" ? { token } : { token, message: reason.value || "denied on the approval page" };
    const r = await api(`${path}/${verdict}`, { method: "POST", body });
    out.replaceChildren(r.status === 200
      ? h("p", { class: "muted" }, `${r.data.status}: the client's call ${verdict === "approve" ? "runs now" : "is told it was denied"}. You can close this page.`)
      : h("div", { class: "toast" }, detail(r.data)));
    actions.hidden = r.status === 200;
    if (r.status === 200) { badge.textContent = r.data.status; refreshPending(); }
  };
  const actions = h("div", { class: "actions" },
    h("button", { type: "button", class: "primary", onclick: () => decide("approve") }, "Approve"),
    reason, h("button", { type: "button", class: "danger", onclick: () => decide("deny") }, "Deny"));
  actions.hidden = data.status !== "pending";
  const badge = h("span", { class: "badge warn" }, data.status === "pending" ? "your MCP client asks" : data.status);
  return h("div", { class: "panel", "data-linked": id },
    h("h2", {}, data.tool, " ", badge),
    h("p", {}, "A client you use asks to run this call. Approve only if it is what you asked for."),
    data.reason ? h("p", { class: "toast" }, data.reason) : null,
    h("pre", {}, JSON.stringify(data.arguments, null, 2)),
    h("dl", { class: "kv" }, h("dt", {}, "asked by"), h("dd", {}, `${data.principal} (${data.channel || "—"})`),
      h("dt", {}, "expires"), h("dd", {}, new Date(data.expires_at * 1000).toLocaleString())),
    actions, out);
}

async function approvalsPage() {
  const { status, data: all } = await api("/api/approvals");
  if (status !== 200) throw new Error(detail(all));
  const linked = await linkedApproval();
  const linkedId = linked?.dataset.linked;
  const data = notOfRuns(all).filter((a) => a.approval_id !== linkedId);
  const list = h("div", {});
  for (const a of data) {
    const args = h("textarea", { class: "code", rows: 4, "aria-label": "Arguments to approve" }, JSON.stringify(a.arguments, null, 2));
    const message = h("input", { type: "text", placeholder: "Reason (shown to the model)", "aria-label": "Reason" });
    const out = h("div", {});
    const decide = async (verdict, runAfter) => {
      let body;
      if (verdict === "approve") {
        let edited;
        try { edited = JSON.parse(args.value); } catch (e) { out.replaceChildren(h("div", { class: "toast" }, `The JSON does not parse: ${e.message}`)); return; }
        body = { approver: "ui", arguments: JSON.stringify(edited) === JSON.stringify(a.arguments) ? null : edited };
      } else body = { approver: "ui", message: message.value || null };
      const r = await api(`/api/approvals/${a.approval_id}/${verdict}`, { method: "POST", body });
      if (r.status !== 200) { out.replaceChildren(h("div", { class: "toast" }, detail(r.data))); return; }
      if (runAfter) out.replaceChildren(await execute(a.tool, JSON.stringify(a.arguments), { user: a.principal, profile: a.profile || "" }));
      else out.replaceChildren(h("p", { class: "muted" }, `${r.data.status}; the caller's repeated call ${verdict === "approve" ? "runs" : "gets denied"}.`));
      refreshPending();
    };
    list.append(h("div", { class: "panel", "data-approval": a.approval_id },
      h("h2", {}, a.tool, " ", h("span", { class: "badge warn" }, "pending")),
      h("dl", { class: "kv" }, h("dt", {}, "principal"), h("dd", {}, a.principal), h("dt", {}, "profile"), h("dd", {}, a.profile || "—"),
        h("dt", {}, "expires"), h("dd", {}, new Date(a.expires_at * 1000).toLocaleString())),
      args, h("div", { class: "actions" },
        h("button", { type: "button", class: "primary", onclick: () => decide("approve", true) }, "Approve & run"),
        h("button", { type: "button", onclick: () => decide("approve", false) }, "Approve"),
        message, h("button", { type: "button", class: "danger", onclick: () => decide("deny", false) }, "Deny")), out));
  }
  const runs = await waitingRuns();
  for (const run of runs) {
    const p = run.pending;
    const out = h("div", {});
    const decide = async (approve) => {
      const r = await api(`/api/runs/${run.run_id}/confirm`, { method: "POST", body: { approve, message: approve ? null : "denied on the Approvals page" } });
      out.replaceChildren(r.status === 200 ? h("p", { class: "muted" }, `The run is ${r.data.state}.`) : h("div", { class: "toast" }, detail(r.data)));
      refreshPending();
    };
    list.append(h("div", { class: "panel", "data-run": run.run_id },
      h("h2", {}, p.tool, " ", h("span", { class: "badge warn" }, "chat run waiting")),
      h("dl", { class: "kv" }, h("dt", {}, "question"), h("dd", {}, run.question), h("dt", {}, "user"), h("dd", {}, run.user || "—"),
        h("dt", {}, "profile"), h("dd", {}, run.profile || "—"), h("dt", {}, "expires"), h("dd", {}, new Date(p.expires_at * 1000).toLocaleString())),
      h("pre", {}, JSON.stringify(p.arguments, null, 2)),
      h("div", { class: "actions" }, h("button", { type: "button", class: "primary", onclick: () => decide(true) }, "Approve"),
        h("button", { type: "button", class: "danger", onclick: () => decide(false) }, "Deny")), out));
  }
  const total = data.length + runs.length;
  app.replaceChildren(linked || "", h("div", { class: "panel" }, h("h1", {}, "Pending confirmations"),
    h("p", { class: "muted" }, total ? "Calls to tools that need confirmation wait here, with chat runs waiting for a decision. \"Approve & run\" completes the call now as its principal; \"Approve\" lets the caller repeat it." : linked ? "Nothing else is waiting for a decision." : "Nothing is waiting for a decision.")), list);
}

async function waitingRuns() {
  const { status, data } = await api("/api/runs", { query: { limit: 200 } });
  return status === 200 ? data.filter((r) => r.state === "waiting_input" && r.pending) : [];
}

async function refreshPending() {
  try {
    const [{ status, data }, runs] = await Promise.all([api("/api/approvals"), waitingRuns()]);
    const count = (status === 200 ? notOfRuns(data).length : 0) + runs.length;
    const badge = document.getElementById("pending-count");
    badge.hidden = !count;
    badge.textContent = String(count);
  } catch { /* the badge is a hint */ }
}

render();
