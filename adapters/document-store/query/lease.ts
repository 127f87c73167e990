/** Lease arguments of `claim`. */
import { InvalidQueryError } from "../../ports.ts";

/** Throws InvalidQueryError unless `claim`'s owner and lease length are usable. */
export function validateLease(owner: string, leaseMs: number): void {
  if (typeof owner !== "string" || owner === "") throw new InvalidQueryError("a lease owner must be a non-empty string");
  if (typeof leaseMs !== "number" || !Number.isFinite(leaseMs) || leaseMs <= 0) throw new InvalidQueryError("leaseMs must be a positive number");
}
