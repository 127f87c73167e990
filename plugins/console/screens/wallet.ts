/**
 * A business's wallet on the Businesses screen: balance, the newest entries, and for an admin a
 * credit (amount, a reason, confirmation) and the suspension switch. Both go through the admin
 * plugin's wallet service offered through the kit (WALLET_OPERATIONS), as the Admin API's
 * `POST /admin/wallets/{businessId}/credits` and `/suspension`. A credit's reference is
 * `console:<the form's idempotency key>`, so a double submit credits once; the reason is logged with
 * the action (`console_action`), as the ledger keeps only the reference.
 */
import type { RequestContext } from "../../../core/context.ts";
import { isGatewayError } from "../../../core/errors/gateway-error.ts";
import { IDEMPOTENCY_FIELD, html, postForm, seeOther, segment, textField, type Flash, type SafeHtml, type Session } from "../../../core/ui/index.ts";
import { EMPTY, badge, facts, section } from "../chrome.ts";
import { FLASH_COOKIE, type ConsoleEnv } from "../env.ts";

const ENTRIES = 20;
const REASON_MAX = 500;

/** The wallet panel (a ledger outage is named in the panel; the rest of the page is drawn). */
export function walletPanel(env: ConsoleEnv, session: Session, businessId: string): Promise<SafeHtml> {
  return section("Wallet", async () => {
    const w = await env.wallet.wallet(businessId, ENTRIES);
    const entries = w.entries.map(
      (e) => html`<tr><td>${String(e.createdAt ?? "")}</td><td>${String(e.type ?? "")}</td><td>${String(e.amount ?? "")}</td><td>${String(e.reference ?? e.billingIdentity ?? "—")}</td></tr>`,
    );
    return html`${facts([
      ["Balance (NGN)", String(w.balance)],
      ["State", w.suspended ? badge("suspended: new sign debits refused", "bad") : badge("in good standing", "ok")],
    ])}${
      entries.length === 0
        ? html`<p>No entries.</p>`
        : html`<div class="table-wrap"><table><thead><tr><th scope="col">When</th><th scope="col">Type</th><th scope="col">Amount (NGN)</th><th scope="col">Reference</th></tr></thead><tbody>${entries}</tbody></table></div>`
    }${session.role === "admin" ? _forms(env, session, businessId, w.suspended === true) : EMPTY}`;
  });
}

/** POST /businesses/:businessId/wallet/credits: amount, reason, confirmation. */
export async function creditAction(env: ConsoleEnv, ctx: RequestContext, session: Session, form: Record<string, string>): Promise<Response> {
  const businessId = ctx.params.businessId ?? "";
  const reason = (form.reason ?? "").trim();
  const key = form[IDEMPOTENCY_FIELD] ?? "";
  const problems = [
    /^[A-Za-z0-9_-]{8,120}$/.test(key) ? null : "reload the page (the form's idempotency key is missing)",
    reason.length > 0 && reason.length <= REASON_MAX ? null : `give a reason (1–${REASON_MAX} characters)`,
    form.confirm === "yes" ? null : "tick the confirmation box",
  ].filter((p): p is string => p !== null);
  if (problems.length > 0) return _back(env, ctx, businessId, { kind: "error", text: `Not credited: ${problems.join("; ")}.` });
  const amount = Number(form.amount);
  return _run(env, ctx, session, businessId, "wallet.credit", reason, async () => {
    const r = await env.wallet.credit(businessId, { amount: Number.isFinite(amount) ? amount : form.amount, reference: `console:${key}` });
    return r.status === 201 ? `Credited NGN ${amount}; balance NGN ${String(r.body.balance)}.` : "Already credited (this form was submitted before): nothing credited again.";
  });
}

/** POST /businesses/:businessId/wallet/suspension: suspend or lift (confirmed). */
export async function suspensionAction(env: ConsoleEnv, ctx: RequestContext, session: Session, form: Record<string, string>): Promise<Response> {
  const businessId = ctx.params.businessId ?? "";
  if (form.confirm !== "yes") return _back(env, ctx, businessId, { kind: "error", text: "Not changed: tick the confirmation box." });
  return _run(env, ctx, session, businessId, "wallet.suspension", "", async () => {
    const r = await env.wallet.setSuspended({ requestId: ctx.requestId, credentialId: session.sub }, businessId, { suspended: form.suspended === "true" });
    return r.suspended ? "The wallet is suspended: new sign debits are refused." : "The suspension is lifted.";
  });
}

// --- Internal helpers ---

function _forms(env: ConsoleEnv, session: Session, businessId: string, suspended: boolean): SafeHtml {
  const base = `/businesses/${segment(businessId)}/wallet`;
  const csrf = env.cookies.csrfToken(session);
  return html`<h3>Credit</h3>${postForm({
    action: env.paths.href(`${base}/credits`),
    csrf,
    idempotent: true,
    submit: "Credit wallet",
    fields: html`${textField({ name: "amount", label: "Amount (NGN, at most two decimals)", type: "number", required: true, maxLength: 20 })}
<div><label for="f-credit-reason">Reason</label><textarea id="f-credit-reason" name="reason" required maxlength="${REASON_MAX}" rows="2"></textarea></div>
<div><input type="checkbox" id="f-credit-confirm" name="confirm" value="yes" required> <label for="f-credit-confirm" class="inline-label">I confirm this top-up</label></div>`,
  })}${postForm({
    action: env.paths.href(`${base}/suspension`),
    csrf,
    layout: "inline",
    button: suspended ? "secondary" : "danger",
    submit: suspended ? "Lift the suspension" : "Suspend the wallet",
    fields: html`<input type="hidden" name="suspended" value="${suspended ? "false" : "true"}"><input type="checkbox" id="f-susp-confirm" name="confirm" value="yes" required> <label for="f-susp-confirm" class="inline-label">${
      suspended ? "Allow new sign debits again" : "Refuse this business's new sign debits"
    }</label>`,
  })}`;
}

async function _run(env: ConsoleEnv, ctx: RequestContext, session: Session, businessId: string, action: string, reason: string, fn: () => Promise<string>): Promise<Response> {
  let flash: Flash;
  try {
    flash = { kind: "ok", text: await fn() };
  } catch (e) {
    if (!isGatewayError(e)) throw e;
    const why = e.data?.violations?.map((vi) => `${vi.field || vi.location}: ${vi.detail}`).join("; ");
    flash = { kind: "error", text: `Not changed: ${e.message}${why ? ` (${why})` : ""}` };
  }
  env.kit.log.event("console_action", { requestId: ctx.requestId, actor: `operator:${session.sub}`, action, businessId, result: flash.kind, ...(reason ? { reason } : {}) });
  return _back(env, ctx, businessId, flash);
}

function _back(env: ConsoleEnv, ctx: RequestContext, businessId: string, flash: Flash): Response {
  const to = /^[a-z0-9][a-z0-9_-]{0,63}$/.test(businessId) ? env.paths.href(`/businesses/${segment(businessId)}`) : env.paths.href("/businesses");
  return seeOther(ctx, to, [["set-cookie", env.cookies.seal(FLASH_COOKIE, flash, 60_000, ctx.req.url.startsWith("https:"))]]);
}
