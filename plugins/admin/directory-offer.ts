/**
 * The directory changes the admin plugin offers through the plugin kit (DIRECTORY_OPERATIONS in
 * plugins/invoice/offers.ts), for the operator console: the same service the Admin API routes call,
 * behind the same body schemas and path-parameter checks, so a console change and its API route
 * validate, deduplicate and audit alike. Likewise the wallet routes' reads and changes
 * (WALLET_OPERATIONS).
 */
import * as v from "valibot";
import { gwError } from "../../core/errors/gateway-error.ts";
import type { BillingLedger } from "../../adapters/ports.ts";
import type { PluginKit } from "../../core/plugin.ts";
import type { DirectoryOperations, WalletOperations } from "../invoice/offers.ts";
import { DomainParams, DomainUpdateBody, EmptyBody, KeyCreateBody, KeyParams, KeyRollBody, KeyUpdateBody, ModeChangeBody } from "./directory-schemas.ts";
import type { DirectoryAdmin } from "./directory-service.ts";
import { CreditBody, SuspensionBody, WalletParams, creditWallet, suspendWallet, walletView } from "./wallet-routes.ts";

export function directoryOperations(admin: DirectoryAdmin): DirectoryOperations {
  return {
    createKey: async (op, input) => admin.createKey(op, _valid(KeyCreateBody, input, "body")),
    rollKey: async (op, keyId, input) => admin.rollKey(op, _valid(KeyParams, { keyId }, "path").keyId, _valid(KeyRollBody, input, "body")),
    revokeKey: async (op, keyId) => admin.revokeKey(op, _valid(KeyParams, { keyId }, "path").keyId),
    updateKey: async (op, keyId, input) => admin.updateKey(op, _valid(KeyParams, { keyId }, "path").keyId, _valid(KeyUpdateBody, input, "body")),
    changeMode: async (op, host, input) => admin.changeMode(op, _valid(DomainParams, { host }, "path").host, _valid(ModeChangeBody, input, "body")),
    approveDomain: async (op, host) => {
      _valid(EmptyBody, undefined, "body");
      return admin.approveDomain(op, _valid(DomainParams, { host }, "path").host);
    },
    updateDomain: async (op, host, input) => admin.updateDomain(op, _valid(DomainParams, { host }, "path").host, _valid(DomainUpdateBody, input, "body")),
  };
}

export function walletOperations(kit: PluginKit, ledger: BillingLedger): WalletOperations {
  const known = (businessId: string): string => {
    const id = _valid(WalletParams, { businessId }, "path").businessId;
    if (!kit.directory.business(id)) throw gwError("GW_OPERATION_NOT_FOUND", { detail: "No wallet for that business." });
    return id;
  };
  return {
    wallet: async (businessId, limit) => walletView(ledger, known(businessId), limit),
    credit: async (businessId, input) => creditWallet(ledger, known(businessId), _valid(CreditBody, input, "body")),
    setSuspended: async (by, businessId, input) => suspendWallet(kit, ledger, by, known(businessId), _valid(SuspensionBody, input, "body").suspended),
  };
}

// --- Internal helpers ---

function _valid<S extends v.GenericSchema>(schema: S, input: unknown, location: "body" | "path"): v.InferOutput<S> {
  const r = v.safeParse(schema, input);
  if (r.success) return r.output;
  throw gwError("GW_REQUEST_VALIDATION_FAILED", {
    violations: r.issues.map((i) => ({ location, field: v.getDotPath(i) ?? "", code: "FORMAT", detail: i.message })),
  });
}
