/**
 * Transient taxpayer credentials: checked before anything is claimed, used for the two regulator
 * calls of one request (authenticate, then read the entity) and dropped. They are never stored,
 * never logged and never put in an error.
 */
import { gwError } from "../../core/errors/gateway-error.ts";
import type { RegulatorEntity, RegulatorState, TaxpayerLogin } from "../../adapters/regulator/port.ts";
import type { OnboardingEnv } from "./env.ts";
import type { OnboardingInput } from "./schemas.ts";

/** Credentials as the regulator needs them, or GW_REG_CREDENTIALS_REQUIRED (nothing claimed, no call). */
export function requireLogin(creds: OnboardingInput["regulatorCredentials"]): TaxpayerLogin {
  const email = creds?.email;
  const password = creds?.password;
  if (!email || !password)
    throw gwError("GW_REG_CREDENTIALS_REQUIRED", {
      detail: "Send regulatorCredentials with both email and password; retry with the same idempotency key.",
      violations: [
        ...(!email ? [{ location: "body" as const, pointer: "/regulatorCredentials/email", code: "REQUIRED" as const, detail: "required" }] : []),
        ...(!password ? [{ location: "body" as const, pointer: "/regulatorCredentials/password", code: "REQUIRED" as const, detail: "required" }] : []),
      ],
    });
  return { email, password };
}

/** The taxpayer's entity as the regulator knows it, read with the taxpayer's own login. */
export async function verifiedEntity(env: OnboardingEnv, state: RegulatorState, login: TaxpayerLogin, requestId: string): Promise<RegulatorEntity> {
  const { entityId } = await env.regulator.authenticate(state, login, { requestId });
  return env.regulator.getEntity(state, entityId, { requestId });
}
