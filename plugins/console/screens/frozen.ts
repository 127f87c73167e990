/**
 * Frozen operations: the list (GET /admin/invoices/frozen's service: every source newest first,
 * one cursor), one operation's facts, and the resolve action with a confirmation, a reason and an
 * idempotency key in the form. A decision goes through the same service as the Admin API route
 * that records it (the recovery plugin's resolver, offered through the plugin kit): same
 * settlement, same record, same audit entry: the recovery plugin's resolver for Pass-through
 * operations, the Stored plugin's for frozen Stored invoices (both offered through the plugin kit).
 */
import { isBillingError } from "../../../adapters/ports.ts";
import type { RequestContext } from "../../../core/context.ts";
import { isGatewayError } from "../../../core/errors/gateway-error.ts";
import { IDEMPOTENCY_FIELD, html, postForm, radioGroup, seeOther, segment, type Flash, type SafeHtml, type Session } from "../../../core/ui/index.ts";
import { decodeFrozenCursor, listFrozen, type FrozenOperation } from "../../invoice/frozen-operations.ts";
import type { FrozenInvoiceOutcome } from "../../invoice/offers.ts";
import { openStoredInvoices } from "../../invoice/stored-invoices.ts";
import { EMPTY, facts, screen } from "../chrome.ts";
import { FLASH_COOKIE, type ConsoleEnv } from "../env.ts";
import { OUTCOMES, isFrozenKind, readFrozenRecord, type FrozenRecord } from "./frozen-records.ts";

const PAGE_SIZE = 50;
const BUSINESS_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const OPERATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const REASON_MAX = 500;

export async function frozenListScreen(env: ConsoleEnv, ctx: RequestContext, session: Session): Promise<Response> {
  const q = new URLSearchParams(ctx.search);
  const businessId = q.get("businessId") ?? "";
  const cursor = q.get("cursor");
  const before = cursor ? decodeFrozenCursor(cursor) : undefined;
  const filterOk = businessId === "" || BUSINESS_ID.test(businessId);
  const page = before === null || !filterOk ? { data: [], nextCursor: null } : await listFrozen(env.frozen, { businessId: businessId || undefined, before, limit: PAGE_SIZE });
  const body = html`<form method="get" action="${env.paths.href("/frozen")}" class="inline"><div><label for="f-business">Business ID</label><input id="f-business" name="businessId" value="${businessId}" maxlength="64"></div><button type="submit">Filter</button></form>
${!filterOk || before === null ? html`<p class="flash error" role="alert">That filter or page link is not valid.</p>` : EMPTY}
${page.data.length === 0 ? html`<p>No frozen operations${businessId ? " for this business" : ""}.</p>` : _table(env, page.data)}
${page.nextCursor ? html`<p><a href="${env.paths.href("/frozen", { businessId, cursor: page.nextCursor })}">Older operations</a></p>` : EMPTY}`;
  return screen(env, ctx, session, { title: "Frozen operations", current: "/frozen", body });
}

export async function frozenDetailScreen(env: ConsoleEnv, ctx: RequestContext, session: Session): Promise<Response> {
  const { kind, id } = ctx.params;
  const record = isFrozenKind(kind) && id && OPERATION_ID.test(id) ? await readFrozenRecord(env.store, kind, id) : null;
  if (!record) return screen(env, ctx, session, { title: "Not found", current: "/frozen", status: 404, body: html`<p>No such frozen operation.</p>` });
  const title = `${record.kind} ${record.operationId}`;
  const invoiceLink = record.kind === "stored-invoice" ? html`<p><a href="${env.paths.href(`/invoices/${segment(id!)}`)}">The invoice's timeline and regulator answers</a></p>` : EMPTY;
  return screen(env, ctx, session, { title, current: "/frozen", body: html`<section class="panel">${facts(record.facts)}${invoiceLink}</section>${_decision(env, session, record, id!)}` });
}

/** POST …/resolution: validate, record the decision through the Admin API's service, redirect back with the answer. */
export async function resolveAction(env: ConsoleEnv, ctx: RequestContext, session: Session, form: Record<string, string>): Promise<Response> {
  const { kind, id } = ctx.params;
  if (!isFrozenKind(kind) || !id || !OPERATION_ID.test(id)) return _back(env, ctx, env.paths.href("/frozen"), { kind: "error", text: "Nothing to resolve there." });
  const back = env.paths.href(`/frozen/${segment(kind)}/${segment(id)}`);
  const outcome = form.outcome ?? "";
  const reason = (form.reason ?? "").trim();
  const problems = [
    OUTCOMES[kind].includes(outcome) ? null : "choose what happened at the regulator",
    reason.length > 0 && reason.length <= REASON_MAX ? null : `give a reason (1–${REASON_MAX} characters)`,
    form.confirm === "yes" ? null : "confirm that you checked at the regulator",
    /^[A-Za-z0-9_-]{8,128}$/.test(form[IDEMPOTENCY_FIELD] ?? "") ? null : "reload the page (the form's idempotency key is missing)",
  ].filter((p): p is string => p !== null);
  if (problems.length > 0) return _back(env, ctx, back, { kind: "error", text: `Not resolved: ${problems.join("; ")}.` });
  const by = { actor: `operator:${session.sub}`, requestId: ctx.requestId };
  let text: Flash;
  try {
    const r = kind === "stored-invoice" ? await _resolveStored(env, id, outcome, { ...by, credentialId: session.sub }) : kind === "passthrough-sign" ? await env.resolver.resolveSignAttempt(id, outcome as "signed" | "not_signed", by) : await env.resolver.resolveTransmission(id, outcome as "transmitted" | "not_transmitted", by);
    text =
      r === "not_found"
        ? { kind: "error", text: "No such operation." }
        : typeof r === "object" && "refused" in r
          ? { kind: "error", text: `Not resolved: ${r.refused}` }
          : typeof r === "string"
          ? { kind: "warn", text: "Nothing to resolve: this operation is no longer frozen (already resolved, perhaps by a double submit or another operator)." }
          : { kind: "ok", text: `Resolved as ${outcome}.` };
  } catch (e) {
    if (!isBillingError(e)) throw e;
    text = { kind: "error", text: "The ledger refused this settlement (the fee is no longer held as expected); check the wallet entries." };
  }
  // The reason is the operator's note; the Admin API's audit entry has no field for it, so it is logged here.
  env.kit.log.event("console_action", { requestId: ctx.requestId, actor: by.actor, action: `${kind}.resolve`, operationId: id, outcome, result: text.kind, reason: reason.slice(0, REASON_MAX) });
  return _back(env, ctx, back, text);
}

// --- Internal helpers ---

function _table(env: ConsoleEnv, ops: readonly FrozenOperation[]): SafeHtml {
  return html`<div class="table-wrap"><table><thead><tr><th scope="col">Frozen at</th><th scope="col">Kind</th><th scope="col">Operation</th><th scope="col">Business</th><th scope="col">IRN</th><th scope="col">State</th><th scope="col">Money</th><th scope="col">Code</th></tr></thead><tbody>${ops.map(
    (o) => html`<tr><td>${o.frozenAt}</td><td>${o.kind}</td><td><a href="${env.paths.href(`/frozen/${segment(o.kind)}/${segment(o.invoiceId ?? o.operationId)}`)}">${o.invoiceId ?? o.operationId}</a></td><td>${o.businessId}</td><td>${o.irn ?? "—"}</td><td>${o.state ?? "—"}</td><td>${o.money ?? "—"}</td><td>${o.code ?? "—"}</td></tr>`,
  )}</tbody></table></div>`;
}

function _decision(env: ConsoleEnv, session: Session, record: FrozenRecord, id: string): SafeHtml {
  const { kind } = record;
  if (!record.open) return html`<p class="muted">This operation is not frozen any more: nothing to resolve.</p>`;
  if (session.role !== "admin") return html`<p class="muted">Your role is viewer: resolving needs an operator key.</p>`;
  const choices = record.outcomes.map((o) => ({ value: o, label: o.replace("_", " ") }));
  return html`<section class="panel" aria-labelledby="resolve-h"><h2 id="resolve-h">Resolve</h2>
<p>Check at the regulator what happened first: this records the decision and settles the money; it cannot be undone.</p>
${postForm({
  action: env.paths.href(`/frozen/${segment(kind)}/${segment(id)}/resolution`),
  csrf: env.cookies.csrfToken(session),
  idempotent: true,
  submit: "Resolve",
  button: "danger",
  fields: html`${radioGroup("outcome", "What happened at the regulator", choices)}
<div><label for="f-reason">Reason</label><textarea id="f-reason" name="reason" required maxlength="${REASON_MAX}" rows="3"></textarea></div>
<div><input type="checkbox" id="f-confirm" name="confirm" value="yes" required> <label for="f-confirm" class="inline-label">I checked at the regulator and confirm this decision</label></div>`,
})}</section>`;
}

/**
 * A frozen Stored invoice through the Stored plugin's service (the Admin API route's: same record,
 * same audit entry). The same decision again (a double submit) records nothing more.
 */
async function _resolveStored(
  env: ConsoleEnv,
  invoiceId: string,
  outcome: string,
  by: { actor: string; requestId: string; credentialId: string },
): Promise<"not_found" | "not_frozen" | { resolved: true } | { refused: string }> {
  if (!env.storedResolver) return "not_found";
  const before = await openStoredInvoices(env.store).get(invoiceId);
  if (!before) return "not_found";
  if (before.status !== "frozen") return "not_frozen";
  try {
    await env.storedResolver.resolve(by, invoiceId, outcome as FrozenInvoiceOutcome);
    return { resolved: true };
  } catch (e) {
    if (!isGatewayError(e)) throw e;
    if (e.code === "GW_OPERATION_NOT_FOUND") return "not_found";
    if (e.code === "GW_INVOICE_STATE_CONFLICT") return "not_frozen";
    return { refused: e.message };
  }
}

function _back(env: ConsoleEnv, ctx: RequestContext, location: string, flash: Flash): Response {
  return seeOther(ctx, location, [["set-cookie", env.cookies.seal(FLASH_COOKIE, flash, 60_000, ctx.req.url.startsWith("https:"))]]);
}
