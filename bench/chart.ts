/**
 * The bench table as a picture: one SVG (hand-written, no chart library) beside the JSON result in
 * bench/results/. One panel per load scenario (ping, health, relay): a bar per server, its length the
 * req/s on the scenario's own scale, labelled with req/s, p99, CPU per request, RSS and the ratios to
 * bare h3 and to the best peer. Below: the gateway-only scenarios (stored, sign-*, va-list) as lines,
 * and the goals with their verdicts.
 */
import { writeFileSync } from "node:fs";
import { baselineOf, bestPeerOf } from "./report.ts";
import type { BenchReport, ScenarioResult, ServerRole } from "./run.ts";

const WIDTH = 1080;
const LABEL_X = 20;
const BAR_X = 150;
const BAR_MAX = 400;
const ROW_H = 24;
const COLORS: Record<ServerRole, string> = { ceiling: "#9aa5b1", baseline: "#3e7cb1", peer: "#e07a2e", subject: "#2e9e5b" };

/** The SVG text of the report's chart. */
export function renderChart(report: BenchReport): string {
  const out: string[] = [];
  let y = 34;
  out.push(_text(LABEL_X, y, `Gatehouse bench — commit ${report.sha}, ${report.startedAt.slice(0, 16).replace("T", " ")} UTC`, 16, "bold"));
  y += 20;
  const s = report.settings;
  out.push(
    _text(
      LABEL_X,
      y,
      `node ${report.node}, ${report.cores} cores, autocannon -c ${s.connections} -d ${s.duration} -p ${s.pipelining}${s.quick ? " (--quick)" : ""}; load average ${report.loadavg.start[0]} → ${report.loadavg.end[0]}`,
      12,
      "normal",
      "#555",
    ),
  );
  y += 16;
  out.push(_legend(LABEL_X, y));
  y += 16;

  // A load scenario compares servers (a baseline, peers, the upstream beside the gateway); a
  // gateway scenario has the gateway's row alone.
  const compared = new Set(report.scenarios.filter((r) => r.role !== "subject").map((r) => r.scenario));
  const loadScenarios = [...new Set(report.scenarios.filter((r) => compared.has(r.scenario)).map((r) => r.scenario))];
  for (const scenario of loadScenarios) {
    const rows = report.scenarios.filter((r) => r.scenario === scenario);
    // The scale is the compared servers'; the upstream's own rate (the ceiling) is drawn cut off.
    const max = Math.max(...rows.filter((r) => r.role !== "ceiling").map((r) => r.requestsPerSec), 1);
    y += 26;
    out.push(_text(LABEL_X, y, `${scenario}  (${rows[0]!.path})`, 14, "bold"));
    y += 8;
    for (const r of rows) {
      const cut = r.requestsPerSec > max * 1.2;
      const w = Math.max(1, Math.min(r.requestsPerSec / max, 1.2) * BAR_MAX);
      out.push(_text(LABEL_X, y + 16, r.server, 12));
      out.push(`<rect x="${BAR_X}" y="${y + 4}" width="${w.toFixed(1)}" height="${ROW_H - 8}" fill="${COLORS[r.role]}" rx="2"/>`);
      out.push(_text(BAR_X + w + 6, y + 16, (cut ? "» " : "") + _label(report.scenarios, r), 11, "normal", "#222"));
      y += ROW_H;
    }
  }

  const driven = report.scenarios.filter((r) => !compared.has(r.scenario));
  if (driven.length > 0) {
    y += 26;
    out.push(_text(LABEL_X, y, "gateway scenarios", 14, "bold"));
    for (const r of driven) {
      y += 18;
      const unit = r.scenario.startsWith("sign-") ? "signs/s" : r.scenario === "va-list" ? "lists/s (one at a time)" : "req/s";
      out.push(
        _text(
          LABEL_X,
          y,
          `${r.scenario}: ${Math.round(r.requestsPerSec).toLocaleString("en-US")} ${unit}, p50 ${_ms(r.latency.p50)} ms, p99 ${_ms(r.latency.p99)} ms${r.rssMiB === undefined ? "" : `, RSS ${r.rssMiB.toFixed(0)} MiB`}`,
          12,
        ),
      );
    }
  }

  if (report.goals.length > 0) {
    y += 26;
    out.push(_text(LABEL_X, y, "goals (issue 12)", 14, "bold"));
    for (const g of report.goals) {
      y += 18;
      out.push(_text(LABEL_X, y, `${g.met ? "✓" : "✗"}  ${g.name}: ${g.measured} — goal ${g.target}`, 12, "normal", g.met ? "#1d7a45" : "#b3261e"));
    }
  }
  y += 24;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${y}" viewBox="0 0 ${WIDTH} ${y}" font-family="system-ui, -apple-system, Segoe UI, sans-serif">`,
    `<rect width="100%" height="100%" fill="#fff"/>`,
    ...out,
    "</svg>",
    "",
  ].join("\n");
}

/** Writes the chart; returns the file's path. */
export function writeChart(report: BenchReport, file: string): string {
  writeFileSync(file, renderChart(report));
  return file;
}

// --- Internal helpers ---

function _label(rows: readonly ScenarioResult[], r: ScenarioResult): string {
  const parts = [`${Math.round(r.requestsPerSec).toLocaleString("en-US")} req/s`, `p99 ${_ms(r.latency.p99)} ms`];
  if (r.cpuUsPerRequest !== undefined && Number.isFinite(r.cpuUsPerRequest)) parts.push(`${r.cpuUsPerRequest.toFixed(0)} µs CPU/req`);
  if (r.rssMiB !== undefined) parts.push(`${r.rssMiB.toFixed(0)} MiB`);
  if (r.role === "ceiling") return parts.join(" · "); // node:http alone or the upstream itself: no ratio means anything
  const bare = baselineOf(rows, r);
  const peer = bestPeerOf(rows, r);
  if (bare && bare !== r) parts.push(`${(r.requestsPerSec / bare.requestsPerSec).toFixed(2)}x bare`);
  if (peer && peer !== r && r.role !== "peer") parts.push(`${(r.requestsPerSec / peer.requestsPerSec).toFixed(2)}x ${peer.server}`);
  return parts.join(" · ");
}

function _legend(x: number, y: number): string {
  const items: Array<[ServerRole, string]> = [
    ["subject", "Gatehouse"],
    ["baseline", "bare h3"],
    ["peer", "peer gateways"],
    ["ceiling", "node:http alone / upstream direct"],
  ];
  let cx = x;
  const parts: string[] = [];
  for (const [role, label] of items) {
    parts.push(`<rect x="${cx}" y="${y - 9}" width="10" height="10" fill="${COLORS[role]}"/>`, _text(cx + 14, y, label, 11, "normal", "#333"));
    cx += 24 + label.length * 6.5;
  }
  return parts.join("");
}

function _text(x: number, y: number, text: string, size: number, weight = "normal", fill = "#111"): string {
  return `<text x="${x}" y="${y}" font-size="${size}" font-weight="${weight}" fill="${fill}">${_escape(text)}</text>`;
}

function _escape(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

function _ms(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}
