/**
 * Signing routes (Pass-through only): the billed sign, the unbilled validation and direct regulator
 * routes (DECISIONS.md "Invoice gateway"), and the inbound routes that always answer 503.
 * Thin handlers: headers → service → the regulator's answer passed through.
 */
import type { RequestContext } from "../../core/context.ts";
import { gwError } from "../../core/errors/gateway-error.ts";
import type { RouteDeclaration } from "../../core/plugin.ts";
import { relayed } from "../../core/respond.ts";
import { attemptNumber, subBusinessId } from "../../core/validation.ts";
import type { RegulatorState } from "../../adapters/regulator/port.ts";
import { ATTEMPT_NUMBER_HEADER, SUB_BUSINESS_HEADER } from "../invoice/headers.ts";
import {
  checkResourceName,
  InvoiceDocumentBody,
  IrnParams,
  IrnValidationBody,
  PaymentUpdateBody,
  ResourceParams,
  type IrnValidationInput,
} from "./schemas.ts";
import type { SignCaller, SigningService } from "./types.ts";

export const SIGNING_PATHS = {
  sign: "/api/v1/invoice/sign",
  validate: "/api/v1/invoice/validate",
  irnValidate: "/api/v1/invoice/irn/validate",
  resources: "/api/v1/invoice/resources/:name",
  confirm: "/api/v1/invoice/confirm/:irn",
  download: "/api/v1/invoice/download/:irn",
  update: "/api/v1/invoice/update/:irn",
  inboundDownload: "/api/v1/invoice/inbound/:irn/download",
  inboundAcknowledge: "/api/v1/invoice/inbound/:irn/acknowledge",
} as const;

const PASSTHROUGH = { service: "gateway", auth: "apiKey", modes: ["passthrough"] } as const;

/** Routes of one represented business (x-sub-business-id), read from the store before the regulator is called. */
const FOR_SUB_BUSINESS = {
  ...PASSTHROUGH,
  headers: [SUB_BUSINESS_HEADER],
  unavailable: { code: "GW_MANAGEMENT_SERVICE_UNAVAILABLE", detail: "The gateway's store is unavailable; retry with the same key." },
} as const;

export function signingRoutes(service: SigningService): RouteDeclaration[] {
  return [_signRoute(service), ..._validationRoutes(service), ..._regulatorRoutes(service), ..._inboundRoutes()];
}

// --- Internal helpers ---

/** The billed sign. */
function _signRoute(service: SigningService): RouteDeclaration {
  return {
    ...FOR_SUB_BUSINESS,
    headers: [SUB_BUSINESS_HEADER, ATTEMPT_NUMBER_HEADER],
    method: "POST",
    path: SIGNING_PATHS.sign,
    quota: "sign",
    bodyLimit: "large",
    idempotent: true,
    schemas: { body: InvoiceDocumentBody },
    summary: "Sign a regulator invoice document (billed: the domain's sign fee)",
    description:
      "Headers x-sub-business-id, x-idempotency-key and x-attempt-number (default 1). Checks the represented business, business_id, supplier TIN and IRN, debits the sign fee, signs at the regulator and passes its answer through. Replays with the same key and content answer the stored result.",
    responses: { 201: "The regulator's sign answer, passed through" },
    async handler(ctx) {
      const sub = subBusinessId(ctx);
      const attempt = attemptNumber(ctx);
      const key = ctx.idempotencyKey!;
      const res = await service.sign(_caller(ctx), {
        subBusinessId: sub,
        idempotencyKey: key,
        attemptNumber: attempt,
        document: ctx.body as Record<string, unknown>,
      });
      return relayed(ctx, res);
    },
  };
}

/** The unbilled validations at the regulator. */
function _validationRoutes(service: SigningService): RouteDeclaration[] {
  return [
    {
      ...FOR_SUB_BUSINESS,
      method: "POST",
      path: SIGNING_PATHS.validate,
      idempotent: "optional",
      bodyLimit: "large",
      schemas: { body: InvoiceDocumentBody },
      summary: "Validate a regulator invoice document at the regulator (unbilled)",
      responses: { 200: "The regulator's validation answer, passed through" },
      async handler(ctx) {
        const sub = subBusinessId(ctx);
        return relayed(ctx, await service.validateInvoice(_caller(ctx), sub, ctx.body as Record<string, unknown>));
      },
    },
    {
      ...FOR_SUB_BUSINESS,
      method: "POST",
      path: SIGNING_PATHS.irnValidate,
      idempotent: "optional",
      schemas: { body: IrnValidationBody },
      summary: "Validate an IRN at the regulator (unbilled)",
      responses: { 200: "The regulator's answer, passed through" },
      async handler(ctx) {
        const sub = subBusinessId(ctx);
        return relayed(ctx, await service.validateIrn(_caller(ctx), sub, ctx.body as IrnValidationInput));
      },
    },
  ];
}

/** The direct regulator routes: resource lists, and confirm / download / update by IRN (unbilled). */
function _regulatorRoutes(service: SigningService): RouteDeclaration[] {
  return [
    {
      ...PASSTHROUGH,
      method: "GET",
      path: SIGNING_PATHS.resources,
      schemas: { params: ResourceParams },
      summary: "A regulator resource list (currencies, invoice-types, tax-categories, …); unbilled",
      responses: { 200: "The regulator's answer, passed through" },
      async handler(ctx) {
        checkResourceName(ctx.params.name!);
        return relayed(ctx, await service.resource({ state: ctx.state as RegulatorState, requestId: ctx.requestId }, ctx.params.name!));
      },
    },
    {
      ...FOR_SUB_BUSINESS,
      method: "GET",
      path: SIGNING_PATHS.confirm,
      schemas: { params: IrnParams },
      summary: "Confirm an invoice by IRN at the regulator (x-sub-business-id; unbilled)",
      responses: { 200: "The regulator's answer, passed through" },
      async handler(ctx) {
        const sub = subBusinessId(ctx);
        return relayed(ctx, await service.byIrn(_caller(ctx), sub, ctx.params.irn!, { method: "GET", segment: "confirm" }));
      },
    },
    {
      ...FOR_SUB_BUSINESS,
      method: "GET",
      path: SIGNING_PATHS.download,
      schemas: { params: IrnParams },
      summary: "Download an invoice by IRN from the regulator (x-sub-business-id; unbilled)",
      responses: { 200: "The regulator's answer, passed through" },
      async handler(ctx) {
        const sub = subBusinessId(ctx);
        return relayed(ctx, await service.byIrn(_caller(ctx), sub, ctx.params.irn!, { method: "GET", segment: "download" }));
      },
    },
    {
      ...FOR_SUB_BUSINESS,
      method: "PATCH",
      path: SIGNING_PATHS.update,
      idempotent: "optional",
      schemas: { params: IrnParams, body: PaymentUpdateBody },
      summary: "Update an invoice's payment status at the regulator (x-sub-business-id; unbilled)",
      responses: { 200: "The regulator's answer, passed through" },
      async handler(ctx) {
        const sub = subBusinessId(ctx);
        const body = ctx.body as Record<string, unknown>;
        return relayed(ctx, await service.byIrn(_caller(ctx), sub, ctx.params.irn!, { method: "PATCH", segment: "update", body }));
      },
    },
  ];
}

/** Inbound download and acknowledgement: always 503 (their ownership check is unavailable). */
function _inboundRoutes(): RouteDeclaration[] {
  return [
    {
      service: "gateway",
      auth: "apiKey",
      method: "GET",
      path: SIGNING_PATHS.inboundDownload,
      summary: "Inbound invoice download: always 503 GW_INVOICE_OPERATION_UNAVAILABLE (ownership check unavailable)",
      handler: _inboundUnavailable,
    },
    {
      service: "gateway",
      auth: "apiKey",
      method: "POST",
      path: SIGNING_PATHS.inboundAcknowledge,
      summary: "Inbound invoice acknowledgement: always 503 GW_INVOICE_OPERATION_UNAVAILABLE (ownership check unavailable)",
      handler: _inboundUnavailable,
    },
  ];
}

function _caller(ctx: RequestContext): SignCaller {
  return {
    requestId: ctx.requestId,
    businessId: ctx.businessId!,
    state: ctx.state as RegulatorState,
    domain: ctx.domain!.host,
    feeKobo: ctx.domain!.signFeeKobo,
  };
}

function _inboundUnavailable(): never {
  throw gwError("GW_INVOICE_OPERATION_UNAVAILABLE", {
    detail: "Inbound invoice download and acknowledgement are unavailable while their ownership check is unavailable; do not call them.",
  });
}
