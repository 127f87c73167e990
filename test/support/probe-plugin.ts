/**
 * A plugin for pipeline tests: one route per kind of declaration the stages act on. Handlers echo
 * what the pipeline put on the context, so tests assert on real stage output.
 */
import * as v from "valibot";
import { gwError } from "../../core/errors/gateway-error.ts";
import { definePlugin } from "../../core/plugin.ts";
import type { RequestContext } from "../../core/context.ts";
import { envelope, json } from "../../core/respond.ts";
import { attemptNumber, idempotencyKey, subBusinessId } from "../../core/validation.ts";

/** Handler runs of the /probe/counted routes: tests prove a refused request never reached its handler. */
export const probeHits = {
  count: 0,
  reset() {
    this.count = 0;
  },
};

/** Requests parked in /probe/slow until the test releases them. */
export const slowGate = {
  waiting: [] as Array<() => void>,
  releaseAll() {
    for (const r of this.waiting.splice(0)) r();
  },
};

const echo = (ctx: RequestContext) =>
  json(ctx, 200, {
    route: ctx.route?.id,
    host: ctx.host,
    mode: ctx.mode,
    state: ctx.state,
    businessId: ctx.businessId,
    credentialId: ctx.principal?.credentialId ?? null,
    clientAddress: ctx.clientAddress,
    params: ctx.params,
    query: ctx.query,
    body: ctx.body ?? null,
  });

export const probePlugin = definePlugin({
  name: "probe",
  needs: ["coordination"],
  setup: () => ({
    routes: [
    { method: "GET", path: "/probe/echo", service: "gateway", auth: "apiKey", summary: "echo", handler: echo },
    { method: "DELETE", path: "/probe/echo", service: "gateway", auth: "apiKey", summary: "echo delete", handler: echo },
    {
      method: "POST",
      path: "/probe/items/:itemId",
      service: "gateway",
      auth: "apiKey",
      quota: "management",
      idempotent: true,
      schemas: {
        params: v.object({ itemId: v.pipe(v.string(), v.regex(/^[a-z0-9-]{3,20}$/, "3 to 20 of a-z 0-9 -")) }),
        body: v.strictObject({
          name: v.pipe(v.string(), v.minLength(2, "at least 2 characters")),
          count: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
          tags: v.optional(v.array(v.string())),
        }),
      },
      summary: "validated mutation",
      handler: echo,
    },
    {
      method: "POST",
      path: "/probe/sign",
      service: "gateway",
      auth: "apiKey",
      quota: "sign",
      modes: ["passthrough"],
      bodyLimit: "large",
      summary: "sign-class route",
      handler: (ctx) =>
        json(ctx, 200, { attempt: attemptNumber(ctx), key: idempotencyKey(ctx) !== null, sub: subBusinessId(ctx), size: JSON.stringify(ctx.body ?? null).length }),
    },
    { method: "GET", path: "/probe/stored-only", service: "gateway", auth: "apiKey", modes: ["stored"], summary: "stored", handler: echo },
    {
      method: "GET",
      path: "/probe/slow",
      service: "gateway",
      auth: "apiKey",
      summary: "waits until released",
      handler: async (ctx) => {
        await new Promise<void>((resolve) => slowGate.waiting.push(resolve));
        return json(ctx, 200, { done: true });
      },
    },
    {
      method: "GET",
      path: "/probe/boom",
      service: "gateway",
      auth: "apiKey",
      summary: "throws an unexpected error",
      handler: () => {
        throw new Error("database password=hunter2 at mongodb://admin:s3cret@db:27017 exploded");
      },
    },
    {
      method: "GET",
      path: "/probe/operation",
      service: "gateway",
      auth: "apiKey",
      summary: "raises with an operationId",
      handler: () => {
        throw gwError("GW_TRANSMIT_OUTCOME_UNCONFIRMED", { operationId: "op_123" });
      },
    },
    { method: "GET", path: "/probe/admin", service: "gateway", auth: "admin", summary: "operator", handler: echo },
    { method: "GET", path: "/api/v1/probe", service: "collections", auth: "bearer", summary: "collections", handler: (ctx) => envelope(ctx, 200, "ok", { businessId: ctx.businessId }) },
    {
      method: "POST",
      path: "/api/v1/probe",
      service: "collections",
      auth: "bearer",
      schemas: { body: v.object({ amount: v.pipe(v.number(), v.minValue(100, "must be at least 100")) }) },
      summary: "collections validation",
      handler: (ctx) => envelope(ctx, 201, "created", ctx.body),
    },
    {
      method: "GET",
      path: "/probe/counted",
      service: "gateway",
      auth: "apiKey",
      summary: "counts handler runs",
      handler: (ctx) => json(ctx, 200, { count: ++probeHits.count }),
    },
    {
      method: "POST",
      path: "/probe/counted",
      service: "gateway",
      auth: "apiKey",
      quota: "management",
      summary: "counts handler runs (management quota, no idempotency key, any JSON body)",
      handler: (ctx) => json(ctx, 200, { count: ++probeHits.count }),
    },
    ],
  }),
});
