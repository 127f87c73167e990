/** The records a directory-admin request names: a domain, a key, the owner a new key needs. */
import type { CredentialDoc, CredentialScheme, DomainDoc } from "../../../core/directory-store.ts";
import { gwError } from "../../../core/errors/gateway-error.ts";
import type { DirectoryEnv } from "./env.ts";
import { invalidBody, notFound } from "./failures.ts";

export async function domainOf(env: DirectoryEnv, host: string): Promise<DomainDoc> {
  const doc = await env.store.domains.get(host);
  if (!doc) throw gwError("GW_DOMAIN_NOT_PROVISIONED", { detail: "No domain with that host in the directory." });
  return doc;
}

export async function keyOf(env: DirectoryEnv, keyId: string): Promise<CredentialDoc> {
  const doc = await env.store.credentials.findOne({ credentialId: keyId });
  if (!doc) throw notFound("key");
  return doc;
}

/** The owner a key of `scheme` needs: its business (with that product), or none for operator keys. */
export async function keyOwner(env: DirectoryEnv, scheme: CredentialScheme, businessId: string | undefined): Promise<{ state: "TEST" | "LIVE" | null }> {
  if (scheme === "admin") {
    if (businessId !== undefined) throw invalidBody("/businessId", "MISMATCH", "operator keys belong to no business");
    return { state: null };
  }
  if (businessId === undefined) throw invalidBody("/businessId", "REQUIRED", "gateway and collections keys need their business");
  const business = await env.store.businesses.get(businessId);
  if (!business) throw notFound("business");
  if (scheme === "apiKey" ? !business.gateway : !business.collections)
    throw invalidBody("/scheme", "MISMATCH", `the business does not use the ${scheme === "apiKey" ? "invoice gateway" : "collections"} product`);
  return { state: business.state };
}
