/**
 * Operator routes of the alert channel's dead-letter stream (docs/operations.md "Alerts"): alerts
 * whose chat delivery was exhausted, newest first, and their replay (one delivery attempt now).
 * x-admin-api-key, answered on every host, management quota per operator credential; a store outage
 * answers 503 GW_MANAGEMENT_SERVICE_UNAVAILABLE.
 */
import * as v from "valibot";
import { isInvalidQueryError, type AlertChannel } from "../../adapters/ports.ts";
import { gwError } from "../../core/errors/gateway-error.ts";
import { LIST_CURSOR, LIST_LIMIT } from "../../core/paging.ts";
import type { RouteDeclaration } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import { badCursor } from "./directory/failures.ts";

export const ALERT_PATHS = {
  deadLetters: "/admin/alerts/dead-letters",
  replay: "/admin/alerts/dead-letters/:alertId/replay",
} as const;

const OPERATOR = {
  service: "gateway",
  hosts: "any",
  auth: "admin",
  quota: "management",
  skip: ["mode"],
  unavailable: { code: "GW_MANAGEMENT_SERVICE_UNAVAILABLE", detail: "The store is unavailable." },
} as const;

const DeadLetterQuery = v.object({
  status: v.optional(v.picklist(["dead", "replayed"], "dead or replayed")),
  limit: LIST_LIMIT,
  cursor: LIST_CURSOR,
});
const AlertParams = v.object({ alertId: v.pipe(v.string(), v.uuid("an alert id (UUID)")) });

export function alertRoutes(alerts: AlertChannel): RouteDeclaration[] {
  return [
    {
      ...OPERATOR,
      method: "GET",
      path: ALERT_PATHS.deadLetters,
      schemas: { query: DeadLetterQuery },
      summary: "Operator: alerts whose chat delivery was exhausted (the dead-letter stream), newest first",
      description: "Filter `status` (dead: not delivered yet; replayed); `limit` 1–100 (default 50), `cursor` from `nextCursor`.",
      responses: { 200: "{ data: [deadLetter], nextCursor }" },
      async handler(ctx) {
        const q = ctx.query as unknown as v.InferOutput<typeof DeadLetterQuery>;
        const page = await alerts.deadLetters({ limit: q.limit ?? 50, cursor: q.cursor ?? null, ...(q.status ? { status: q.status } : {}) }).catch((e: unknown) => {
          // A cursor of the right alphabet that no page gave (or another filter's): the store refuses it.
          if (isInvalidQueryError(e)) throw badCursor();
          throw e;
        });
        return json(ctx, 200, { data: page.items, nextCursor: page.nextCursor });
      },
    },
    {
      ...OPERATOR,
      method: "POST",
      path: ALERT_PATHS.replay,
      idempotent: true,
      schemas: { params: AlertParams },
      summary: "Operator: deliver a dead-lettered alert again (one attempt now)",
      description:
        "200 { delivered: true } when the chat webhook accepted it (the letter becomes `replayed`; replaying it again sends nothing); 502 GW_UPSTREAM_UNAVAILABLE when it did not (the letter stays dead, its attempt counted).",
      responses: { 200: "{ delivered, letter }" },
      async handler(ctx) {
        const r = await alerts.replay(ctx.params.alertId!);
        if (!r) throw gwError("GW_OPERATION_NOT_FOUND", { detail: "No dead letter with that alert id." });
        if (!r.delivered)
          throw gwError("GW_UPSTREAM_UNAVAILABLE", {
            detail: `The chat webhook did not accept the alert (${r.letter.lastFailure.failureClass}); it stays in the dead-letter stream.`,
          });
        return json(ctx, 200, { delivered: true, letter: r.letter });
      },
    },
  ];
}
