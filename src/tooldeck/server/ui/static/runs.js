// The run view: a chat run (/tools/runs/<id>) or an MCP session's calls
// (/tools/runs/session/<id>) as a waterfall of its tool calls, each placed at its start
// and as long as it took, with its arguments, result, provenance, the approvals the run
// waited on and the answer's grounding. A run still going is drawn live from its events.
import { h, ms } from "./dom.js";
import { progressText, readEvents, verdictBadge } from "./chat.js";
import { answerView } from "./markdown.js";

const BADGE = { success: "ok", decided: "ok", running: "", waiting: "warn" }; // else: a failure

// The waterfall: rows of { label, start, end, status, source_id, as_of, detail(), kind }.
function waterfall(rows) {
  const t0 = Math.min(...rows.map((r) => r.start));
  const t1 = Math.max(...rows.map((r) => r.end ?? r.start), t0 + 1);
  const span = t1 - t0;
  const body = h("tbody", {});
  for (const r of rows) {
    const left = ((r.start - t0) / span) * 100;
    const width = Math.max(0.4, (((r.end ?? t1) - r.start) / span) * 100);
    const bar = h("div", { class: `bar ${r.kind || ""} ${r.status || ""}`, title: `${ms((r.end ?? t1) - r.start)} ms` });
    bar.style.left = `${left.toFixed(2)}%`;
    bar.style.width = `${Math.min(width, 100 - left).toFixed(2)}%`;
    const holder = h("td", { colspan: 5 });
    const open = h("tr", { hidden: true }, holder);
    const row = h("tr", { class: "clickable", tabindex: 0, "data-call": r.id || "" },
      h("td", {}, r.kind === "approval" ? [h("span", { class: "badge warn" }, "approval"), " ", h("code", {}, r.label || "")] : h("code", {}, r.label)),
      h("td", { class: "lane" }, h("div", { class: "track" }, bar)),
      h("td", { class: "num" }, r.end == null ? "…" : ms(r.end - r.start)),
      h("td", {}, r.status ? h("span", { class: `badge ${BADGE[r.status] ?? "err"}` }, r.status) : ""),
      h("td", {}, r.source_id ? h("code", {}, r.source_id) : "", r.as_of ? h("span", { class: "muted small" }, ` ${r.as_of}`) : ""));
    const toggle = async () => {
      open.hidden = !open.hidden;
      if (!open.hidden && !holder.childElementCount && r.detail) holder.append(await r.detail());
    };
    row.addEventListener("click", toggle);
    row.addEventListener("keydown", (e) => { if (e.key === "Enter") toggle(); });
    body.append(row, open);
  }
  return h("div", { class: "table-wrap" }, h("table", { id: "waterfall", class: "waterfall" },
    h("thead", {}, h("tr", {}, h("th", {}, "call"), h("th", {}, `timeline (${ms(span)} ms)`), h("th", { class: "num" }, "ms"), h("th", {}, "status"), h("th", {}, "provenance"))),
    body));
}

// A call's arguments and result, from its audit record (redacted as stored).
function recordDetail(ctx, recordId, fallback) {
  return async () => {
    if (!recordId) return h("pre", {}, JSON.stringify(fallback, null, 2));
    const { status, data } = await ctx.api(`/api/audit/${recordId}`);
    if (status !== 200) return h("div", { class: "toast" }, ctx.detail(data));
    return h("div", { class: "layout two" },
      h("div", {}, h("h2", {}, "Arguments"), h("pre", {}, JSON.stringify(data.arguments, null, 2)),
        data.edited_by ? h("p", { class: "muted" }, `edited by ${data.edited_by}; asked: ${JSON.stringify(data.asked_arguments)}`) : null),
      h("div", {}, h("h2", {}, data.error_type ? `Error: ${data.error_type}` : "Result"),
        h("pre", {}, data.error_type ? data.error_message : JSON.stringify(data.data, null, 2))));
  };
}

async function auditOf(ctx, query) {
  const { status, data } = await ctx.api("/api/audit", { query: { ...query, limit: 500 } });
  return status === 200 ? data.records : [];
}

async function sessionView(app, ctx, session) {
  const records = (await auditOf(ctx, { session })).reverse();
  const rows = records.map((r) => {
    const end = new Date(r.created_at).getTime();
    return { id: r.request_id, label: r.tool_name, start: end - (r.duration_ms || 0), end, status: r.status === "success" ? "success" : r.error_type || "error",
      source_id: r.source_id, as_of: r.as_of, detail: recordDetail(ctx, r.id) };
  });
  app.replaceChildren(h("div", { class: "panel" }, h("h1", {}, "Session ", h("code", {}, session)),
    h("p", { class: "muted" }, `${rows.length} calls of one MCP client connection, oldest first.`)),
    h("div", { class: "panel" }, rows.length ? waterfall(rows) : h("p", { class: "muted" }, "No calls recorded for this session.")));
}

export async function runPage(app, ctx, id) {
  if (id.startsWith("session/")) return sessionView(app, ctx, decodeURIComponent(id.slice(8)));
  const { status, data: run } = await ctx.api(`/api/runs/${encodeURIComponent(id)}`);
  if (status !== 200) throw new Error(ctx.detail(run));
  const calls = new Map(); // call_id → row
  const rows = [];
  let waiting = null; // the approval row the run waits on, until its next event
  const state = h("span", { class: "badge", id: "run-state" }, run.state);
  const chart = h("div", { id: "run-waterfall" });
  const outcome = h("div", { id: "run-outcome" });
  const redraw = () => chart.replaceChildren(rows.length ? waterfall(rows) : h("p", { class: "muted" }, "No tool calls yet."));
  const records = new Map((await auditOf(ctx, { run: id })).map((r) => [r.request_id, r.id]));
  const onEvent = (event) => {
    const t = new Date(event.timestamp).getTime();
    const d = event.data || {};
    if (waiting && event.type !== "run.waiting_input") { // the wait ends with what follows it
      Object.assign(waiting, { end: t, status: event.type === "run.cancelled" ? "cancelled" : "decided" });
      waiting = null;
    }
    if (event.type === "tool_call.started") {
      const row = { id: d.call_id, name: d.name, label: d.name, start: t, end: null, status: "running", detail: recordDetail(ctx, null, d.arguments) };
      calls.set(d.call_id, row); rows.push(row);
    } else if (event.type === "tool_call.progress") {
      const row = calls.get(d.call_id);
      if (row) row.label = `${row.name} · ${progressText(d)}`;
    } else if (event.type === "tool_call.completed") {
      const row = calls.get(d.call_id || d.id);
      if (row) {
        Object.assign(row, { label: row.name, end: row.start + d.duration_ms, status: d.status === "success" ? "success" : d.error_type || "error", source_id: d.source_id, as_of: d.as_of });
        row.detail = recordDetail(ctx, records.get(row.id), d);
      }
    } else if (event.type === "run.waiting_input") {
      waiting = { kind: "approval", label: d.pending?.tool, start: t, end: null, status: "waiting" };
      rows.push(waiting);
    } else if (event.type === "run.completed") {
      outcome.replaceChildren(answerPanel(d.answer));
    } else if (event.type === "run.failed" || event.type === "run.cancelled") {
      outcome.replaceChildren(h("div", { class: "error-box" }, d.error || d.reason || event.type));
    }
    if (event.type.startsWith("run.")) state.textContent = event.type.slice(4).replace("waiting_input", "waiting for approval");
    redraw();
  };
  app.replaceChildren(
    h("div", { class: "panel" }, h("h1", {}, "Run ", state),
      h("p", { class: "question" }, h("strong", {}, "Question: "), run.question),
      h("p", { class: "muted" }, `${run.user || "anonymous"} · profile ${run.profile || "—"} · started ${new Date(run.created_at).toLocaleString()} · `,
        h("a", { href: `/tools/history?run=${encodeURIComponent(id)}`, "data-link": true }, "its calls in History"))),
    h("div", { class: "panel" }, h("h2", {}, "Tool calls"), chart), outcome);
  redraw();
  const response = await fetch(`/api/runs/${encodeURIComponent(id)}/events`, { headers: { ...ctx.authHeaders(), accept: "text/event-stream" } });
  if (response.ok) await readEvents(response, onEvent);
}

function answerPanel(answer) {
  const g = answer.grounding;
  return h("div", { class: "panel" }, h("h2", {}, "Answer"),
    h("p", {}, "Grounding: ", verdictBadge(g), h("span", { class: "muted" }, ` ${g.numbers_checked} numbers and ${g.citations_checked} citations checked · ${answer.mode}${answer.intent ? " · " + answer.intent : ""}`)),
    ...(g.findings || []).map((f) => h("div", { class: "toast" }, f.message || JSON.stringify(f))),
    answerView(answer.answer_markdown, answer.claims || []),
    answer.citations.length ? h("p", { id: "citations" }, "Sources: ", ...answer.citations.map((c) => h("code", { class: "citation" }, c))) : null);
}
