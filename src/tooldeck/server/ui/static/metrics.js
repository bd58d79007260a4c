// The Metrics page: per tool (or profile) calls, failures, calls waiting for a person,
// latency percentiles, and a chart of the selected row over the window (uPlot, vendored
// in static/vendor: nothing is fetched from the internet).
import { h, ms } from "./dom.js";

let loading = null;

// The vendored uPlot, loaded once, when a chart is first drawn.
function uPlotLibrary() {
  if (window.uPlot) return Promise.resolve(window.uPlot);
  loading ||= new Promise((resolve, reject) => {
    document.head.append(h("link", { rel: "stylesheet", href: "/tools/static/vendor/uPlot.min.css" }));
    document.head.append(h("script", {
      src: "/tools/static/vendor/uPlot.iife.min.js",
      onload: () => resolve(window.uPlot),
      onerror: () => reject(new Error("the chart library (static/vendor/uPlot.iife.min.js) did not load")),
    }));
  });
  return loading;
}

// One row's series: calls and failures per bucket (bars, left axis), p95 ms (line, right).
async function drawChart(holder, stat, span) {
  const uPlot = await uPlotLibrary();
  const series = stat.series;
  const [since, until] = span.map((t) => new Date(t).getTime() / 1000);
  const step = (until - since) / Math.max(1, series.length);
  const data = [
    series.map((b) => new Date(b.start).getTime() / 1000 + step / 2), // each bar in its bucket
    series.map((b) => b.calls),
    series.map((b) => b.errors),
    series.map((b) => b.p95_ms),
  ];
  const bars = (size) => uPlot.paths.bars({ size: [size, 64] });
  const options = {
    width: Math.max(280, holder.clientWidth),
    height: 220,
    scales: { x: { time: true, range: () => [since, until] }, calls: { range: (u, min, max) => [0, Math.max(1, max)] }, ms: {} },
    axes: [
      {},
      { scale: "calls", label: "calls per bucket", size: 50 },
      { scale: "ms", side: 1, label: "p95 ms", grid: { show: false }, size: 60 },
    ],
    series: [
      { label: "bucket" },
      { label: "calls", scale: "calls", stroke: "#6b82d6", fill: "rgba(159, 177, 238, 0.55)", paths: bars(0.8), points: { show: false } },
      { label: "failures", scale: "calls", stroke: "#c0392b", fill: "rgba(192, 57, 43, 0.55)", paths: bars(0.35), points: { show: false } },
      { label: "p95 ms", scale: "ms", stroke: "#2c3e50", width: 2, spanGaps: true, value: (u, v) => (v == null ? "—" : `${v.toFixed(1)} ms`) },
    ],
  };
  shown?.destroy();
  holder.replaceChildren();
  shown = new uPlot(options, data, holder);
}

let shown = null; // the chart on the page: one at a time, resized with the window
window.addEventListener("resize", () => {
  if (shown?.root.isConnected) shown.setSize({ width: Math.max(280, shown.root.parentElement.clientWidth), height: 220 });
});

export async function metricsPage(app, { api, detail, filterSelect }) {
  const params = new URLSearchParams(location.search);
  const since = params.get("since") || "24h";
  const by = params.get("by") || "tool";
  const { status, data } = await api("/api/stats", { query: { since, by, buckets: 24 } });
  if (status !== 200) throw new Error(detail(data));
  const total = data.stats.reduce((n, s) => n + s.calls, 0);
  const failures = data.stats.reduce((n, s) => n + s.errors, 0);
  const waiting = data.stats.reduce((n, s) => n + (s.waiting || 0), 0);
  const holder = h("div", { id: "metrics-chart", class: "chart" });
  const title = h("h2", { id: "chart-title" });
  const select = (stat, row) => {
    tbody.querySelectorAll("tr.selected").forEach((r) => r.classList.remove("selected"));
    row.classList.add("selected");
    title.textContent = `${stat.key || "(no profile)"}: calls, failures and p95 latency, ${since} in ${stat.series.length} buckets`;
    drawChart(holder, stat, [data.since, data.until]).catch((error) => holder.replaceChildren(h("div", { class: "toast" }, String(error.message || error))));
  };
  const rows = data.stats.map((s) => {
    const row = h("tr", { class: "clickable", tabindex: 0, "data-key": s.key },
      h("td", {}, by === "tool" ? h("a", { href: `/tools/history?tool=${encodeURIComponent(s.key)}`, "data-link": true }, s.key) : (s.key || "(none)")),
      h("td", { class: "num" }, s.calls), h("td", { class: "num" }, s.errors),
      h("td", { class: "num" }, `${(s.error_rate * 100).toFixed(1)}%`), h("td", { class: "num" }, s.waiting || 0),
      h("td", { class: "num" }, ms(s.p50_ms)), h("td", { class: "num" }, ms(s.p95_ms)));
    row.addEventListener("click", (event) => { if (!event.target.closest("a")) select(s, row); });
    row.addEventListener("keydown", (event) => { if (event.key === "Enter") select(s, row); });
    return row;
  });
  const tbody = h("tbody", {}, ...(rows.length ? rows : [h("tr", {}, h("td", { colspan: 7, class: "muted" }, "No calls in this window."))]));
  const columns = [[by, ""], ["calls", "num"], ["failures", "num"], ["failure rate", "num"], ["waiting", "num"], ["p50 ms", "num"], ["p95 ms", "num"]];
  app.replaceChildren(
    h("div", { class: "panel" }, h("h1", {}, "Metrics"),
      h("div", { class: "filters" }, filterSelect("since", [["1h", "last hour"], ["24h", "last 24 h"], ["7d", "last 7 days"], ["30d", "last 30 days"]], "24h"), filterSelect("by", [["tool", "tool"], ["profile", "profile"]], "tool")),
      h("p", { class: "muted" }, `${total} calls, ${failures} failed, ${waiting} waited for a person's approval (not failures), between ${new Date(data.since).toLocaleString()} and ${new Date(data.until).toLocaleString()}. Prometheus: `, h("a", { href: "/metrics" }, "/metrics"), ".")),
    h("div", { class: "panel", hidden: !rows.length }, title, holder),
    h("div", { class: "panel" }, h("p", { class: "muted" }, "Select a row to chart it."), h("table", { id: "metrics" },
      h("thead", {}, h("tr", {}, ...columns.map(([c, k]) => h("th", { class: k }, c)))), tbody)));
  if (rows.length) select(data.stats[0], rows[0]);
}
