// The Chat page: ask a question, follow its run as it streams (POST /api/chat/stream,
// Server-Sent Events), answer a clarifying question, approve or deny a waiting call.
import { h } from "./dom.js";
import { withCode } from "./form.js";
import { answerView } from "./markdown.js";

// Reads a text/event-stream body and calls onEvent(RunEvent) for each event.
export async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replace(/\r\n?/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
      if (data) onEvent(JSON.parse(data));
    }
  }
}

// "3/10 page 3": a tool_call.progress event's data as a line.
export function progressText(d) {
  const count = d.total != null ? `${d.progress}/${d.total}` : `${d.progress}`;
  return d.message ? `${count} ${d.message}` : count;
}

export function verdictBadge(grounding) {
  const kind = { grounded: "ok", quoted: "warn", repaired: "warn", ungrounded: "err" }[grounding.verdict] || "";
  return h("span", { class: `badge ${kind}`, id: "grounding", title: `${grounding.numbers_checked} numbers, ${grounding.citations_checked} citations checked` }, grounding.verdict);
}

// One run's panel; returns { panel, onEvent } and fills itself from the events.
function runView(ctx, ask) {
  const stateBadge = h("span", { class: "badge", id: "run-state" }, "queued");
  const calls = h("tbody", {});
  const callTable = h("table", { id: "run-calls", hidden: true },
    h("thead", {}, h("tr", {}, ...["tool", "arguments", "status", "source_id", "as_of", "ms"].map((c) => h("th", { class: c === "ms" ? "num" : "" }, c)))), calls);
  const rows = new Map();
  const streamed = h("div", { class: "answer streaming" });
  const body = h("div", {}, streamed);
  const waiting = h("div", {});
  let runId = null;
  const viewLink = h("a", { class: "small", "data-link": true, hidden: true, id: "run-view" }, "timeline");
  const panel = h("div", { class: "panel run" }, h("h2", {}, "Run ", stateBadge, " ", viewLink), waiting, body,
    h("div", { class: "table-wrap" }, callTable));

  const decide = async (approve, out) => {
    const { status, data } = await ctx.api(`/api/runs/${runId}/confirm`, { method: "POST", body: { approve, message: approve ? null : "denied in the chat page" } });
    if (status !== 200) out.replaceChildren(h("div", { class: "toast" }, ctx.detail(data)));
    ctx.refreshPending();
  };
  const completed = (answer) => {
    const parts = [h("p", {}, "Grounding: ", verdictBadge(answer.grounding), " ",
      h("span", { class: "muted" }, `${answer.mode}${answer.model ? " · " + answer.model : ""}${answer.intent ? " · " + answer.intent : ""} · confidence ${answer.confidence}`)), answerView(answer.answer_markdown, answer.claims || [])];
    if (answer.citations.length) parts.push(h("p", { id: "citations" }, "Sources: ", ...answer.citations.map((c) => h("code", { class: "citation" }, c))));
    for (const f of answer.grounding.findings || []) parts.push(h("div", { class: "toast" }, f.message || JSON.stringify(f)));
    if (answer.needs_clarification && answer.clarifying_question) parts.push(clarify(answer.clarifying_question, ask));
    body.replaceChildren(...parts);
  };
  const onEvent = (event) => {
    runId = event.run_id;
    viewLink.href = `/tools/runs/${encodeURIComponent(runId)}`;
    viewLink.hidden = false;
    const d = event.data || {};
    switch (event.type) {
      case "run.created": case "run.started": stateBadge.textContent = "running"; waiting.replaceChildren(); break;
      case "tool_call.started": {
        const row = h("tr", { "data-call": d.call_id }, h("td", {}, h("code", {}, d.name)), h("td", {}, h("code", {}, JSON.stringify(d.arguments))),
          h("td", {}, h("span", { class: "badge" }, "running")), h("td", {}), h("td", {}), h("td", { class: "num" }));
        rows.set(d.call_id, row); calls.append(row); callTable.hidden = false; break;
      }
      case "tool_call.progress": {
        const row = rows.get(d.call_id);
        if (!row) break;
        const bar = h("progress", { value: d.progress });
        if (d.total != null) bar.max = d.total; else bar.removeAttribute("value"); // unknown total: busy
        row.children[2].replaceChildren(bar, " ", progressText(d));
        break;
      }
      case "tool_call.completed": {
        const row = rows.get(d.call_id || d.id);
        if (!row) break;
        const [, , status, source, asOf, ms] = row.children;
        status.replaceChildren(h("span", { class: `badge ${d.status === "success" ? "ok" : "err"}`, title: d.error_message || "" }, d.status === "success" ? "success" : d.error_type || "error"));
        source.replaceChildren(d.source_id ? h("code", {}, d.source_id) : "");
        asOf.textContent = d.as_of || ""; ms.textContent = d.duration_ms != null ? d.duration_ms.toFixed(1) : "";
        break;
      }
      case "message.delta": streamed.append(d.text); break;
      case "run.waiting_input": {
        stateBadge.textContent = "waiting for you"; stateBadge.className = "badge warn";
        const p = d.pending; const out = h("div", {});
        waiting.replaceChildren(h("div", { class: "confirm-box", id: "pending" },
          h("p", {}, h("code", {}, p.tool), " needs your approval before it runs with these arguments:"),
          h("pre", {}, JSON.stringify(p.arguments, null, 2)), h("p", { class: "muted" }, withCode(p.description)),
          h("div", { class: "actions" }, h("button", { type: "button", class: "primary", onclick: () => decide(true, out) }, "Approve"),
            h("button", { type: "button", class: "danger", onclick: () => decide(false, out) }, "Deny")), out));
        ctx.refreshPending(); break;
      }
      case "run.completed": stateBadge.textContent = "completed"; stateBadge.className = "badge ok"; waiting.replaceChildren(); completed(d.answer); break;
      case "run.failed": case "run.cancelled":
        stateBadge.textContent = event.type.slice(4); stateBadge.className = "badge err"; waiting.replaceChildren();
        body.replaceChildren(h("div", { class: "error-box" }, d.error || d.reason || event.type)); break;
      default: break;
    }
  };
  return { panel, onEvent };
}

// The clarifying question's options; answering asks the same question again with the
// chosen value in `params` (docs/contracts.md).
function clarify(q, ask) {
  const name = `clarify-${q.parameter}`;
  const inputs = q.type === "text" ? [h("input", { type: "text", name, "aria-label": q.question })]
    : q.options.map((o) => h("label", { class: "option" }, h("input", { type: q.type, name, value: o }), " ", o));
  const value = () => {
    if (q.type === "text") return inputs[0].value.trim();
    const chosen = inputs.map((l) => l.querySelector("input")).filter((i) => i.checked).map((i) => i.value);
    return q.type === "radio" ? chosen[0] : chosen;
  };
  return h("form", { class: "confirm-box clarify", onsubmit: (e) => { e.preventDefault(); const v = value(); if (v && v.length) ask({ [q.parameter]: v }); } },
    h("p", {}, h("strong", {}, q.question)), h("div", { class: "options" }, ...inputs),
    h("div", { class: "actions" }, h("button", { class: "primary" }, "Answer")));
}

export async function chatPage(app, ctx) {
  const question = h("textarea", { id: "question", rows: 2, maxlength: 4000, placeholder: "Ask about the data the tools reach, e.g. What is AAPL trading at?", "aria-label": "Question" });
  const runs = h("div", { id: "runs" });
  const ask = async (params = {}) => {
    const text = question.value.trim();
    if (!text) { question.focus(); return; }
    const { panel, onEvent } = runView(ctx, ask);
    runs.prepend(h("div", { class: "panel" }, h("p", { class: "question" }, h("strong", {}, "You: "), text,
      Object.keys(params).length ? h("span", { class: "muted" }, ` (${Object.entries(params).map(([k, v]) => `${k}: ${v}`).join(", ")})`) : null)), panel);
    const body = { question: text, params, profile: ctx.state.profile || null };
    const stream = () => fetch("/api/chat/stream", { method: "POST", headers: { ...ctx.authHeaders(), "content-type": "application/json", accept: "text/event-stream" }, body: JSON.stringify(body) });
    try {
      let response = await stream();
      if (response.status === 401) { await ctx.api("/api/runs", { query: { limit: 1 } }); response = await stream(); } // asks for the key
      if (!response.ok) { const data = await response.json().catch(() => ({})); throw new Error(`HTTP ${response.status}: ${ctx.detail(data)}`); }
      await readEvents(response, onEvent);
    } catch (error) {
      panel.append(h("div", { class: "error-box" }, String(error.message || error)));
    }
  };
  const form = h("form", { class: "panel chat-form", onsubmit: (e) => { e.preventDefault(); ask(); } },
    h("h1", {}, "Chat"),
    h("p", { class: "muted" }, "Answers come from the tools", ctx.state.profile ? ` of profile ${ctx.state.profile}` : "", ", with the sources they cite and the grounding check's verdict."),
    question, h("div", { class: "actions" }, h("button", { class: "primary", id: "ask" }, "Ask")));
  question.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); ask(); } });
  app.replaceChildren(form, runs);
  question.focus();
}
