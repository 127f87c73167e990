/**
 * The direct regulator routes (unbilled): confirm, download and the payment-status update by IRN,
 * for an IRN of the caller's represented business, and the regulator's resource lists.
 */
import { checkBodyIrn, checkIrn } from "../invoice/checks.ts";
import { ownedBusiness } from "../invoice/represented-businesses.ts";
import type { IrnCall, PassThrough, SignCaller, SigningServiceOptions } from "./types.ts";

export async function byIrn(o: SigningServiceOptions, caller: SignCaller, subBusinessId: string, irn: string, call: IrnCall): Promise<PassThrough> {
  const sub = await ownedBusiness(o.store.subBusinesses, caller, subBusinessId);
  const parsed = checkIrn(irn, sub.identity.irnTemplate, "path");
  checkBodyIrn(call.body, parsed.irn);
  return o.regulator.relay(
    caller.state,
    {
      method: call.method,
      path: `/api/v1/invoice/${call.segment}/${encodeURIComponent(parsed.irn)}`,
      ...(call.body ? { body: call.body } : {}),
      operation: `relay.${call.segment}`,
    },
    { requestId: caller.requestId },
  );
}

export async function resource(o: SigningServiceOptions, caller: Pick<SignCaller, "state" | "requestId">, name: string): Promise<PassThrough> {
  return o.regulator.relay(
    caller.state,
    { method: "GET", path: `/api/v1/invoice/resources/${encodeURIComponent(name)}`, operation: "relay.resources" },
    { requestId: caller.requestId },
  );
}
