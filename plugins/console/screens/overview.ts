/**
 * Overview: what the person on call looks at first. Each section reads its own source and says in
 * place when that source is down, so the page always draws:
 * - dependencies: every circuit (regulator TEST/LIVE, store, coordination, billing, …) from the
 *   resilience policies, in-flight requests, and one ping of the coordination store (the page writes
 *   nothing; a store outage shows in the sections that read the store);
 * - traffic: requests and error answers, and signs (billed sign attempts, reversals) per minute
 *   over the last hour (this process, in memory), and the Stored backlog read once a minute;
 * - work waiting: the Stored backlog per status with the oldest pending age, the webhook outbox,
 *   open recovery work (the status reports plugins register for /health/dependencies);
 * - alerts: the alert channel's figures and the newest dead letters.
 */
import { isDependencyUnavailableError, type DependencySnapshot } from "../../../adapters/ports.ts";
import type { RequestContext } from "../../../core/context.ts";
import { EMPTY, barChart, html, type SafeHtml, type Session } from "../../../core/ui/index.ts";
import { badge, facts, outageNotice, screen, section } from "../chrome.ts";
import type { ConsoleEnv } from "../env.ts";

export async function overviewScreen(env: ConsoleEnv, ctx: RequestContext, session: Session): Promise<Response> {
  await env.traffic.sample().catch(() => undefined);
  const reports = await env.kit.reports.collect().catch(() => ({}) as Record<string, unknown>);
  const parts = await Promise.all([
    section("Dependencies", () => _dependencies(env)),
    section("Traffic, last hour", async () => _traffic(env)),
    section("Work waiting", async () => _work(env, reports)),
    section("Alerts", () => _alerts(env)),
  ]);
  return screen(env, ctx, session, { title: "Overview", current: "", body: html`<div class="grid">${parts}</div>` });
}

// --- Internal helpers ---

async function _dependencies(env: ConsoleEnv): Promise<SafeHtml> {
  const runtime = env.kit.runtime;
  const circuits = env.kit.dependencyHealth.snapshot();
  const storeCircuit = circuits.find((c) => c.dependency === "documentStore");
  // The coordination store has no circuit of its own here: one ping (bounded by its command timeout) says whether it answers.
  const coordinationDown = await env.kit.ports.coordination.ping().then(
    () => null,
    (e: unknown) => (isDependencyUnavailableError(e) ? e.dependency : "coordination"),
  );
  return html`${coordinationDown ? outageNotice(coordinationDown) : EMPTY}${facts([
    ["Document store", `${env.store.kind}${storeCircuit ? `, circuit ${storeCircuit.state.replace("_", "-")}` : ""}`],
    ["Coordination", html`${env.kit.ports.coordination.kind} ${coordinationDown ? badge("down", "bad") : badge("answering", "ok")}`],
    ["In flight (this process)", runtime.inFlight().total],
    ["Ready", runtime.isReady() ? (runtime.isDraining() ? "draining" : "yes") : "no"],
  ])}
<div class="table-wrap"><table><caption class="muted">Circuits (spec §3.5)</caption>
<thead><tr><th scope="col">Dependency</th><th scope="col">Circuit</th><th scope="col">Failures / calls (window)</th><th scope="col">Last failure</th></tr></thead>
<tbody>${circuits.map(_circuitRow)}</tbody></table></div>`;
}

function _circuitRow(c: DependencySnapshot): SafeHtml {
  const kind = c.state === "closed" ? "ok" : c.state === "open" ? "bad" : "warn";
  return html`<tr><td>${c.dependency}</td><td>${badge(c.state.replace("_", "-"), kind)}</td><td>${c.windowFailures} / ${c.windowCalls}</td><td>${
    c.lastFailureClass ? `${c.lastFailureClass} at ${c.lastFailureAt ?? "?"}` : "—"
  }</td></tr>`;
}

function _traffic(env: ConsoleEnv): SafeHtml {
  const minutes = env.traffic.minutes();
  const requests = minutes.map((m) => m.requests);
  const errors = minutes.map((m) => m.errors);
  const signs = minutes.map((m) => m.signs);
  const reversals = minutes.map((m) => m.reversals);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return html`<h3>Requests</h3>${barChart({ title: "Requests per minute (errors in red)", values: requests, overlay: errors, startLabel: "-60 min", endLabel: "now" })}
<p class="muted">This process: ${sum(requests)} requests, ${sum(errors)} answered with an error code in the last hour.</p>
<h3>Signs</h3>${barChart({ title: "Signs per minute (fees given back in red)", values: signs, overlay: reversals, startLabel: "-60 min", endLabel: "now" })}
<p class="muted">This process: ${sum(signs)} billed sign attempts (Pass-through and Stored), ${sum(reversals)} fees given back in the last hour.</p>
${_backlogChart(minutes)}`;
}

/** The Stored backlog, read once a minute: invoices with work due, frozen ones in red. */
function _backlogChart(minutes: ReturnType<ConsoleEnv["traffic"]["minutes"]>): SafeHtml {
  const read = minutes.filter((m) => m.backlog !== null);
  const last = read.at(-1);
  const peak = Math.max(0, ...read.map((m) => m.backlog ?? 0));
  const summary = last ? `Stored backlog: ${last.backlog} with work due now (peak ${peak} in the last hour), ${last.frozen ?? 0} frozen.` : "Stored backlog: not read yet.";
  return html`<h3>Stored backlog</h3>${barChart({
    title: "Stored backlog",
    values: minutes.map((m) => m.backlog ?? 0),
    overlay: minutes.map((m) => m.frozen ?? 0),
    startLabel: "-60 min",
    endLabel: "now",
    summary,
  })}<p class="muted">${summary} Read once a minute${read.length < minutes.length ? `; ${minutes.length - read.length} minutes without a reading (the process was not running, or the store did not answer)` : ""}.</p>`;
}

function _work(env: ConsoleEnv, reports: Record<string, unknown>): SafeHtml {
  const stored = reports.storedProcessor as { backlog?: Record<string, number>; frozen?: number; oldestPendingAgeMs?: number | null; status?: string } | undefined;
  const outbox = reports.webhookOutbox as { pending?: number; dead?: number; status?: string } | undefined;
  const recovery = reports.recovery as { open?: Record<string, unknown>; lastRun?: { at?: string } | null; status?: string } | undefined;
  const unknown = (r: { status?: string } | undefined) => !r || r.status === "unknown";
  return html`<h3>Stored invoices</h3>${
    unknown(stored)
      ? html`<p class="flash warn">The Stored backlog cannot be read right now (the document store did not answer).</p>`
      : html`<div class="table-wrap"><table><thead><tr><th scope="col">Status</th><th scope="col">Invoices</th></tr></thead><tbody>${Object.entries(stored!.backlog ?? {}).map(
          ([k, v]) => html`<tr><td>${k}</td><td>${v}</td></tr>`,
        )}<tr><td>frozen</td><td><a href="${env.paths.href("/frozen")}">${stored!.frozen ?? 0}</a></td></tr></tbody></table></div>
<p>Oldest pending: ${stored!.oldestPendingAgeMs === null || stored!.oldestPendingAgeMs === undefined ? "none" : _age(stored!.oldestPendingAgeMs)}</p>`
  }
<h3>Webhook outbox</h3>${unknown(outbox) ? html`<p class="flash warn">The outbox cannot be read right now.</p>` : facts([["Pending", outbox!.pending], ["Failed (dead)", outbox!.dead]])}
<h3>Recovery jobs</h3>${unknown(recovery) ? html`<p class="muted">No report.</p>` : facts([["Last run", recovery!.lastRun?.at ?? "not yet"], ...Object.entries(recovery!.open ?? {}).map(([k, v]) => [`Open: ${k}`, v] as const)])}`;
}

async function _alerts(env: ConsoleEnv): Promise<SafeHtml> {
  if (!env.alerts) return html`<p class="muted">No alert channel is configured.</p>`;
  const [status, letters] = await Promise.all([env.alerts.status(), env.alerts.deadLetters({ limit: 5, status: "dead" })]);
  return html`${facts([
    ["Channel", `${status.status} (${status.channels.join(", ") || "log only"})`],
    ["Sent / suppressed", `${status.sent} / ${status.suppressed}`],
    ["Delivery failures", status.deliveryFailures],
    ["Dead letters", status.deadLetters ?? "unknown"],
    ["Last delivery", status.webhook.lastDelivery ? `${status.webhook.lastDelivery.outcome} at ${status.webhook.lastDelivery.at}` : "none"],
  ])}
${
  letters.items.length === 0
    ? html`<p>No dead letters waiting.</p>`
    : html`<ul>${letters.items.map((l) => html`<li>${l.alert.severity}: ${l.alert.summary} <span class="muted">(${l.deadAt})</span></li>`)}</ul>`
}<p><a href="${env.paths.href("/alerts")}">Alerts and dead letters</a></p>`;
}

function _age(ms: number): string {
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}
