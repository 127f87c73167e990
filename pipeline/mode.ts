/**
 * Stage 10, mode: resolve the domain's mode (Pass-through / Stored) and refuse routes that the
 * mode does not offer. The mode is server-controlled; a request never chooses it.
 */
import { gwError } from "../core/errors/gateway-error.ts";
import { defineStage } from "./define-stage.ts";

export const modeStage = defineStage({
  name: "mode",
  create() {
    return function mode(ctx) {
      if (!ctx.domain) return;
      if (!ctx.domain.mode) throw gwError("GW_TENANT_MODE_UNAVAILABLE", { detail: "The domain's mode cannot be determined." });
      ctx.mode = ctx.domain.mode;
      const modes = ctx.route!.decl.modes;
      if (modes && !modes.includes(ctx.mode))
        throw gwError("GW_OPERATION_MODE_CONFLICT", {
          detail: `This endpoint is not available on a ${ctx.mode === "passthrough" ? "Pass-through" : "Stored"} domain.`,
        });
    };
  },
});
