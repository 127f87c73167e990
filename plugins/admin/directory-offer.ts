/**
 * The directory changes the admin plugin offers through the plugin kit (DIRECTORY_OPERATIONS in
 * plugins/invoice/offers.ts), for the operator console: the same service the Admin API routes call,
 * behind the same body schemas and path-parameter checks, so a console change and its API route
 * validate, deduplicate and audit alike.
 */
import * as v from "valibot";
import { gwError } from "../../core/errors/gateway-error.ts";
import type { DirectoryOperations } from "../invoice/offers.ts";
import { DomainParams, EmptyBody, KeyCreateBody, KeyParams, KeyRollBody, ModeChangeBody } from "./directory-schemas.ts";
import type { DirectoryAdmin } from "./directory-service.ts";

export function directoryOperations(admin: DirectoryAdmin): DirectoryOperations {
  return {
    createKey: async (op, input) => admin.createKey(op, _valid(KeyCreateBody, input, "body")),
    rollKey: async (op, keyId, input) => admin.rollKey(op, _valid(KeyParams, { keyId }, "path").keyId, _valid(KeyRollBody, input, "body")),
    revokeKey: async (op, keyId) => admin.revokeKey(op, _valid(KeyParams, { keyId }, "path").keyId),
    changeMode: async (op, host, input) => admin.changeMode(op, _valid(DomainParams, { host }, "path").host, _valid(ModeChangeBody, input, "body")),
    approveDomain: async (op, host) => {
      _valid(EmptyBody, undefined, "body");
      return admin.approveDomain(op, _valid(DomainParams, { host }, "path").host);
    },
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
