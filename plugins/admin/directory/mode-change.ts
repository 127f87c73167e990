/**
 * The mode change (DECISIONS.md "Stored mode — Mode change"): an approved domain drains (its invoice
 * routes answer 503 with Retry-After while in-flight work finishes), then is approved in its new
 * mode (modeVersion + 1, so a request authorized under the previous mode is refused). The current
 * mode while draining calls the drain off; a domain not served yet changes mode at once.
 */
import type { DomainDoc } from "../../../core/directory-store.ts";
import type { ModeChangeInput } from "../directory-schemas.ts";
import { domainMutation } from "./domains.ts";
import { isoNow, type AdminAnswer, type DirectoryEnv, type OperatorCall } from "./env.ts";
import { approvalState } from "./failures.ts";
import { domainOf } from "./lookups.ts";

export async function changeMode(env: DirectoryEnv, op: OperatorCall, host: string, input: ModeChangeInput): Promise<AdminAnswer> {
  return domainMutation(env, op, host, { host, ...input }, {
    decide(doc) {
      let set: Partial<DomainDoc> | null = null;
      let action = "domain.mode_change";
      if (doc.approval === "pending_approval") {
        if (doc.mode !== input.mode) set = { mode: input.mode }; // not served yet: nothing to drain
      } else if (doc.approval === "draining") {
        // Back to the current mode: the drain is called off; nothing was approved, modeVersion stays.
        if (doc.pendingMode !== input.mode) {
          set = { approval: "approved", pendingMode: null, drainingSince: null };
          action = "domain.mode_change_cancelled";
        }
      } else {
        if (doc.mode === input.mode) throw approvalState(`The domain is approved in ${_modeName(input.mode)} mode already; nothing to change.`, "Domain already in that mode");
        set = { approval: "draining", pendingMode: input.mode, drainingSince: isoNow(env) };
      }
      return set ? { action, set, changes: _domainChanges(doc, { ...doc, ...set }) } : null;
    },
    applied(doc) {
      env.log.event("directory_domain_mode_change", { requestId: op.requestId, operator: op.credentialId, host, approval: doc.approval, mode: doc.mode, pendingMode: doc.pendingMode });
    },
    extra: (doc) => (doc.approval === "draining" ? { retryAfterSeconds: env.drainRetryAfterSeconds } : {}),
  });
}

export async function approveDomain(env: DirectoryEnv, op: OperatorCall, host: string): Promise<AdminAnswer> {
  const served = await _servedDomainsOf(env, (await domainOf(env, host)).businessId);
  return domainMutation(env, op, host, { host }, {
    decide(doc) {
      if (doc.approval === "approved") throw approvalState("The domain is approved; nothing awaits approval (start with a mode change).", "Nothing awaits approval");
      const other = served.find((h) => h !== host);
      if (other !== undefined)
        throw approvalState(`The business already has an approved domain (${other}); a top-level business has one approved domain, so a further domain needs its own business.`, "Business already has an approved domain");
      const set: Partial<DomainDoc> = {
        approval: "approved",
        mode: doc.approval === "draining" && doc.pendingMode ? doc.pendingMode : doc.mode,
        pendingMode: null,
        drainingSince: null,
        modeVersion: doc.modeVersion + 1,
      };
      return { action: "domain.approve", set, changes: _domainChanges(doc, { ...doc, ...set }) };
    },
    applied(doc) {
      env.log.event("directory_domain_approved", { requestId: op.requestId, operator: op.credentialId, host, mode: doc.mode, modeVersion: doc.modeVersion });
    },
  });
}

// --- Internal helpers ---

/**
 * The hosts of a business that are served (approved, or draining towards a new mode): a mode change
 * of the one domain keeps it the same domain; a pending domain is not served yet.
 */
async function _servedDomainsOf(env: DirectoryEnv, businessId: string): Promise<string[]> {
  const page = await env.store.domains.find({ businessId }, { limit: 1000 });
  return page.items.filter((d) => d.approval !== "pending_approval").map((d) => d._id);
}

function _modeName(mode: DomainDoc["mode"]): string {
  return mode === "passthrough" ? "Pass-through" : "Stored";
}

function _domainChanges(before: DomainDoc, after: Partial<DomainDoc>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of ["approval", "mode", "pendingMode", "modeVersion"] as const)
    if (before[f] !== after[f]) out[f] = { from: before[f], to: after[f] };
  return out;
}
