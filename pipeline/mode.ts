/**
 * Stage 10, mode: resolve the domain's mode (Pass-through / Stored) and refuse routes that the
 * mode does not offer. The mode is server-controlled; a request never chooses it. While the domain
 * drains for a mode change (DECISIONS.md "Mode change") its mode-specific routes answer 503
 * GW_TENANT_MODE_UNAVAILABLE with Retry-After.
 */
import { gwError } from "../core/errors/gateway-error.ts";
import { defineStage } from "./define-stage.ts";

export const modeStage = defineStage({
  name: "mode",
  create({ config }) {
    const drainRetryAfterSeconds = config.directory.drainRetryAfterSeconds;
    return function mode(ctx) {
      if (!ctx.domain) return;
      if (!ctx.domain.mode) throw gwError("GW_TENANT_MODE_UNAVAILABLE", { detail: "The domain's mode cannot be determined." });
      ctx.mode = ctx.domain.mode;
      const modes = ctx.route!.decl.modes;
      // A mode change drains the domain: its mode-specific (invoice) routes wait for the approval.
      if (modes && ctx.domain.approval === "draining")
        throw gwError("GW_TENANT_MODE_UNAVAILABLE", {
          detail: "The domain is changing mode; retry with the same key and content after Retry-After.",
          retryAfterSeconds: drainRetryAfterSeconds,
        });
      if (modes && !modes.includes(ctx.mode))
        throw gwError("GW_OPERATION_MODE_CONFLICT", {
          detail: `This endpoint is not available on a ${ctx.mode === "passthrough" ? "Pass-through" : "Stored"} domain.`,
        });
    };
  },
});
