/** `POST /api/v1/invoice/transmit/:irn` (Pass-through): body `{}`, x-sub-business-id, optional x-idempotency-key. */
import type { RouteDeclaration } from "../../core/plugin.ts";
import { relayed } from "../../core/respond.ts";
import { subBusinessId } from "../../core/validation.ts";
import type { RegulatorState } from "../../adapters/regulator/port.ts";
import { TransmitParams, checkEmptyBody } from "./schemas.ts";
import { SUB_BUSINESS_HEADER } from "../invoice/headers.ts";
import type { TransmissionService } from "./types.ts";

export const TRANSMIT_PATH = "/api/v1/invoice/transmit/:irn";

export function transmissionRoutes(service: TransmissionService): RouteDeclaration[] {
  return [
    {
      service: "gateway",
      auth: "apiKey",
      modes: ["passthrough"],
      quota: "default",
      method: "POST",
      path: TRANSMIT_PATH,
      idempotent: "optional",
      headers: [SUB_BUSINESS_HEADER],
      unavailable: { code: "GW_MANAGEMENT_SERVICE_UNAVAILABLE", detail: "The gateway's store is unavailable; nothing was transmitted." },
      schemas: { params: TransmitParams },
      summary: "Transmit a signed invoice by IRN (unbilled; one regulator transmission per IRN claim)",
      description:
        "Body exactly {}. x-sub-business-id required; x-idempotency-key optional (without it the operation identity is the business + represented business + IRN). A second matching request gets 409 GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED with the existing operationId.",
      responses: { 201: "The regulator's transmit answer, passed through" },
      async handler(ctx) {
        const sub = subBusinessId(ctx);
        const key = ctx.idempotencyKey;
        checkEmptyBody(ctx.body);
        const res = await service.transmit(
          { requestId: ctx.requestId, businessId: ctx.businessId!, state: ctx.state as RegulatorState },
          sub,
          ctx.params.irn!,
          key,
        );
        return relayed(ctx, res);
      },
    },
  ];
}
