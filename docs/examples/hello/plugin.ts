/**
 * A tiny example plugin (docs/plugins.md walks through it; test/plugins/example/example-plugin.test.ts runs
 * it). It stores greetings per business in the document store: one public read, one
 * authenticated idempotent mutation with a validated body, on approved gateway domains.
 */
import * as v from "valibot";
import { gwError } from "../../../core/errors/gateway-error.ts";
import { definePlugin, type RouteDeclaration } from "../../../core/plugin.ts";
import { json } from "../../../core/respond.ts";
import { isDuplicateKeyError, type Doc } from "../../../adapters/ports.ts";

interface Greeting extends Doc {
  businessId: string;
  name: string;
  message: string;
  createdAt: string;
}

const GreetingBody = v.strictObject({
  name: v.pipe(v.string(), v.minLength(1, "1 to 40 characters"), v.maxLength(40, "1 to 40 characters")),
  message: v.optional(v.pipe(v.string(), v.maxLength(200, "at most 200 characters")), "Hello"),
});

/** What both routes answer when the document store cannot answer (a 503 the caller retries). */
const STORE_DOWN = { code: "GW_MANAGEMENT_SERVICE_UNAVAILABLE", detail: "The greeting store is unavailable; retry with the same key." } as const;

export const hello = definePlugin({
  name: "hello",
  needs: ["documentStore"],
  stages: ["auth", "quota"],
  setup({ ports }) {
    const greetings = ports.documentStore.collection<Greeting>("hello_greetings", {
      indexes: [{ fields: ["businessId", "name"], unique: true }],
    });
    const routes: RouteDeclaration[] = [
      {
        method: "POST",
        path: "/hello/greetings",
        service: "gateway",
        auth: "apiKey",
        quota: "management",
        idempotent: true,
        schemas: { body: GreetingBody },
        unavailable: STORE_DOWN,
        summary: "Store a greeting for the caller's business",
        responses: { 201: "The greeting", 200: "Replay of the same key" },
        async handler(ctx) {
          const body = ctx.body as v.InferOutput<typeof GreetingBody>;
          const key = ctx.idempotencyKey!;
          const id = `${ctx.businessId}:${key}`;
          const replay = async () => {
            const existing = await greetings.get(id);
            if (!existing) return null;
            if (existing.name !== body.name || existing.message !== body.message) throw gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT");
            return json(ctx, 200, _view(existing));
          };
          const earlier = await replay();
          if (earlier) return earlier;
          try {
            const doc = await greetings.insert({
              _id: id,
              businessId: ctx.businessId!,
              name: body.name,
              message: body.message,
              createdAt: new Date().toISOString(),
            });
            return json(ctx, 201, _view(doc));
          } catch (e) {
            if (!isDuplicateKeyError(e)) throw e;
            // A concurrent request with the same key won the insert: answer as its replay.
            const raced = await replay();
            if (raced) return raced;
            throw gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT", { detail: "That name already has a greeting." });
          }
        },
      },
      {
        method: "GET",
        path: "/hello/greetings/:name",
        service: "gateway",
        auth: "apiKey",
        schemas: { params: v.object({ name: v.pipe(v.string(), v.maxLength(40)) }) },
        unavailable: STORE_DOWN,
        summary: "Read a greeting of the caller's business",
        async handler(ctx) {
          const doc = await greetings.findOne({ businessId: ctx.businessId, name: ctx.params.name });
          if (!doc) throw gwError("GW_ROUTE_NOT_FOUND", { detail: "No greeting with that name." });
          return json(ctx, 200, _view(doc));
        },
      },
    ];
    return { routes };
  },
});

// --- Internal helpers ---

function _view(g: Greeting) {
  return { name: g.name, message: `${g.message}, ${g.name}!`, createdAt: g.createdAt };
}
