/**
 * The request headers of the invoice operations, declared once for every route that reads them
 * (RouteDeclaration `headers`: the OpenAPI document shows them). Their checks are core's
 * (core/validation.ts `subBusinessId`, `attemptNumber`).
 */
import type { RouteHeader } from "../../core/plugin.ts";

export const SUB_BUSINESS_HEADER: RouteHeader = {
  name: "x-sub-business-id",
  required: true,
  description: "The represented business the operation is for (its gatewaySubBusinessId): 1 to 255 visible characters, copied exactly.",
  pattern: "^[\\x21-\\x7e]{1,255}$",
};

export const ATTEMPT_NUMBER_HEADER: RouteHeader = {
  name: "x-attempt-number",
  required: false,
  description: "The billing attempt of this IRN (default 1): a new sign attempt after a rejection needs the next number and a new idempotency key.",
  pattern: "^[1-9][0-9]{0,8}$",
};
