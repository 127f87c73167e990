/**
 * Stage 10, mode: resolve the domain's mode (Pass-through / Stored) and refuse routes that the
 * mode does not offer. The mode is server-controlled; a request never chooses it. A method + path
 * declared once per mode (core/route-table.ts "Mode variants") is swapped here for the declaration
 * of the domain's mode, before the route's own checks run; the table is planned at startup. While
 * the domain drains for a mode change (DECISIONS.md "Mode change") its mode-specific routes answer
 * 503 GW_TENANT_MODE_UNAVAILABLE with Retry-After.
 */
import { gwError } from "../core/errors/gateway-error.ts";
import { defineStage } from "../core/stages/define.ts";

export const modeStage = defineStage({
  name: "mode",
  create({ config }) {
    const drainRetryAfterSeconds = config.directory.drainRetryAfterSeconds;
    return function mode(ctx) {
      if (!ctx.domain) return;
      if (!ctx.domain.mode) throw gwError("GW_TENANT_MODE_UNAVAILABLE", { detail: "The domain's mode cannot be determined." });
      ctx.mode = ctx.domain.mode;
      const byMode = ctx.route!.modeRoutes;
      if (!byMode) return;
      // A mode change drains the domain: its mode-specific (invoice) routes wait for the approval.
      if (ctx.domain.approval === "draining")
        throw gwError("GW_TENANT_MODE_UNAVAILABLE", {
          detail: "The domain is changing mode; retry with the same key and content after Retry-After.",
          retryAfterSeconds: drainRetryAfterSeconds,
        });
      const route = byMode[ctx.mode];
      if (!route)
        throw gwError("GW_OPERATION_MODE_CONFLICT", { detail: _modeConflictDetail(ctx.mode) });
      ctx.route = route;
    };
  },
});

// --- Internal helpers ---

/** Names the domain's mode and the mode the endpoint belongs to. */
function _modeConflictDetail(mode: "passthrough" | "stored"): string {
  return mode === "passthrough"
    ? "This domain is in Pass-through mode; this endpoint is a Stored-mode endpoint. Use the Pass-through routes, or ask the operator for a mode change."
    : "This domain is in Stored mode; this endpoint is a Pass-through-mode endpoint. Use the Stored routes, or ask the operator for a mode change.";
}
