/**
 * Health routes: /health and /health/live (the process answers), /health/ready (local readiness
 * plus the coordination-store check; not_ready as soon as draining starts), /health/dependencies
 * (operator key; the cached snapshot) and /metrics (operator key; Prometheus text format, when
 * `metrics.enabled`). The public ones skip every stage that could refuse or wait.
 */
import type { PluginKit, RouteDeclaration } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import type { HealthChecker } from "./checker.ts";

const PUBLIC_SKIPS = ["admission", "capacity-guard", "auth", "ip-allowlist", "quota", "mode"] as const;
const OPERATOR_SKIPS = ["admission", "capacity-guard", "ip-allowlist", "mode"] as const;

export function healthRoutes(kit: PluginKit, checker: HealthChecker): RouteDeclaration[] {
  return [
    ...(kit.config.metrics.enabled ? [_metricsRoute(kit)] : []),
    _liveness("/health"),
    _liveness("/health/live"),
    _readinessRoute(checker),
    _dependenciesRoute(checker),
  ];
}

// --- Internal helpers ---

function _liveness(path: string): RouteDeclaration {
  return {
    method: "GET",
    path,
    service: "gateway",
    hosts: "any",
    auth: "none",
    skip: PUBLIC_SKIPS,
    summary: "Liveness: the process answers",
    responses: { 200: "{ status: ok }" },
    handler: (ctx) => json(ctx, 200, { status: "ok" }),
  };
}

function _readinessRoute(checker: HealthChecker): RouteDeclaration {
  return {
    method: "GET",
    path: "/health/ready",
    service: "gateway",
    hosts: "any",
    auth: "none",
    skip: PUBLIC_SKIPS,
    summary: "Readiness: local readiness plus the coordination-store check",
    responses: { 200: "{ status: ready }", 503: "{ status: not_ready, reasons }" },
    handler: async (ctx) => {
      const reasons = await checker.readiness();
      return reasons.length === 0 ? json(ctx, 200, { status: "ready" }) : json(ctx, 503, { status: "not_ready", reasons });
    },
  };
}

function _dependenciesRoute(checker: HealthChecker): RouteDeclaration {
  return {
    method: "GET",
    path: "/health/dependencies",
    service: "gateway",
    hosts: "any",
    auth: "admin",
    quota: "none",
    skip: OPERATOR_SKIPS,
    summary: "Cached dependency snapshot (operators)",
    responses: { 200: "The snapshot" },
    handler: (ctx) => json(ctx, 200, checker.snapshot()),
  };
}

function _metricsRoute(kit: PluginKit): RouteDeclaration {
  return {
    method: "GET",
    path: "/metrics",
    service: "gateway",
    hosts: "any",
    auth: "admin",
    quota: "none",
    skip: OPERATOR_SKIPS,
    summary: "Prometheus metrics (operators; text format 0.0.4)",
    description:
      "Requests by route and code with latency histograms, dependency calls, circuit states, quota refusals, capacity in use, processor and outbox backlogs, dead letters, wallet movements, alerts and recovery actions. Gauges read the cached dependency snapshot: a scrape never fans out to dependencies.",
    responses: { 200: "text/plain; version=0.0.4" },
    handler: async (ctx) => {
      const text = await kit.metrics.text();
      return new Response(text, { status: 200, headers: { "content-type": kit.metrics.contentType, "cache-control": "no-store", "x-request-id": ctx.requestId } });
    },
  };
}
