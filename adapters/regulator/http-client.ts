/**
 * The regulator client over HTTP (undici): the RegulatorClient port (./port.ts) against the regulator's
 * e-invoicing interface v1.1.6, or the built-in simulator, which it cannot tell apart.
 *
 * Its parts, in ./http/:
 *   options.ts     the options, their defaults and checks, and what the client offers beyond the port
 *   transport.ts   targets per state (undici Pool per origin, policy per state), request headers
 *                  (credentials, hop header, request id), one exchange under the deadline
 *   call.ts        one call through the policy, the staged credential pair, log event and report
 *   call-log.ts    the `gateway_dependency_call` log event
 *   interpret.ts   status and envelope → the wanted value or the failure
 *   entity.ts      the entity answer and its businesses, field by field
 *   outcomes.ts    failures → the port's outcomes, or the thrown GW error
 *   relay.ts       the direct-route rules: allowed requests, log names, safe response headers
 *   operations.ts  the port's operations (request, call, outcome)
 */
import { checkOptions, type HttpRegulatorClient, type HttpRegulatorClientOptions } from "./http/options.ts";
import { callEventShape } from "./http/call-log.ts";
import type { CallEnv } from "./http/call.ts";
import { authenticate, confirm, getEntity, relay, sign, transmit, validateInvoice, validateIrn } from "./http/operations.ts";
import { closePools, createTargets, credentialHeaders, describeTargets } from "./http/transport.ts";

export { DEFAULT_REGULATOR_TIMEOUT_MS } from "./http/options.ts";
export type { HttpRegulatorClient, HttpRegulatorClientOptions, RegulatorCallEvent } from "./http/options.ts";

/** Builds the client: checks the options, opens one pool per origin, finds or creates the policies. */
export function createHttpRegulatorClient(options: HttpRegulatorClientOptions): HttpRegulatorClient {
  const { timeoutMs, maxResponseBytes } = checkOptions(options);
  const headers = credentialHeaders(options);
  const callEvent = callEventShape(options.log);
  const { pools, targets } = createTargets(options, timeoutMs);
  const env: CallEnv = { targets, credentialHeaders: headers, callEvent, log: options.log, maxResponseBytes, hooks: options };
  return {
    authenticate: (state, login, ctx) => authenticate(env, state, login, ctx),
    getEntity: (state, entityId, ctx) => getEntity(env, state, entityId, ctx),
    validateIrn: (state, body, ctx) => validateIrn(env, state, body, ctx),
    validateInvoice: (state, invoiceDocument, ctx) => validateInvoice(env, state, invoiceDocument, ctx),
    sign: (state, invoiceDocument, ctx) => sign(env, state, invoiceDocument, ctx),
    transmit: (state, irn, ctx) => transmit(env, state, irn, ctx),
    confirm: (state, irn, ctx) => confirm(env, state, irn, ctx),
    describe: () => describeTargets(targets, headers.length > 1),
    relay: (state, request, ctx) => relay(env, state, request, ctx),
    close: () => closePools(pools),
  };
}
