/**
 * How a presented key is found in the directory: the `_id` of its credential record is the sha256
 * of the key ("sha256:<hex>"), so the plain key is never stored.
 */
import { hash } from "node:crypto";

export function hashSecret(secret: string): string {
  return "sha256:" + hash("sha256", secret);
}
