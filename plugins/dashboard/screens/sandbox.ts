/**
 * The TEST sandbox from the dashboard, so a developer fires real webhooks at their endpoint: a
 * deposit into one of the business's virtual accounts (the service of
 * `POST /api/v1/sandbox/virtual-account/deposit`: settled → the wallet credit and
 * IN_FLOW_SUCCESS_EVENT; refunded with its reason), and a checkout of a payment link with a chosen
 * outcome (the checkout service the pay page uses: CHECKOUT_* webhooks). Both are TEST-only in the
 * services themselves (404 for a LIVE business, whatever a form sends); LIVE pages draw no form.
 *
 * Once per form: the sandbox deposit API makes a new deposit per call, so a dashboard submission
 * first claims its form's idempotency key in `dashboard_sandbox_submissions` (unique `_id`, kept a
 * day); a double submit finds the claim and deposits nothing again. A checkout passes the key as
 * the checkout token, which the checkout service already answers with the same session.
 */
import { isDuplicateKeyError, type Collection, type Doc, type DocumentStore } from "../../../adapters/ports.ts";
import { IDEMPOTENCY_FIELD, html, postForm, radioGroup, textField, type SafeHtml } from "../../../core/ui/index.ts";
import type { DashboardCaller } from "../../invoice/dashboard-offers.ts";
import { isForeign, refusalText, type DataDeps, type ViewCtx } from "./data-kit.ts";
import type { ActionResult } from "./payment-links.ts";

export const SANDBOX_SUBMISSIONS_COLLECTION = "dashboard_sandbox_submissions";

const KEEP_MS = 24 * 60 * 60 * 1000;
const KEY = /^[A-Za-z0-9-]{8,64}$/;

interface SubmissionDoc extends Doc {
  businessId: string;
  expiresAtMs: number;
}

export function openSandboxSubmissions(store: DocumentStore): Collection<SubmissionDoc> {
  return store.collection<SubmissionDoc>(SANDBOX_SUBMISSIONS_COLLECTION, { ttlField: "expiresAtMs" });
}

/** The deposit form of a virtual account's page (TEST businesses, developers and owners). */
export function sandboxDepositForm(v: ViewCtx, accountNumber: string, fixedAmount: number | null): SafeHtml {
  return postForm({
    action: v.paths.href("/sandbox/deposits"),
    csrf: v.csrf,
    idempotent: true,
    submit: "Make the test deposit",
    fields: html`<p class="muted">A simulated transfer into this account: settled, it credits the collection wallet and sends IN_FLOW_SUCCESS_EVENT to your endpoints.</p>
<input type="hidden" name="account_number" value="${accountNumber}">
${textField({ name: "amount", label: "Amount (NGN)", value: fixedAmount === null ? "1000" : String(fixedAmount), required: true, maxLength: 20 })}
${textField({ name: "sender_name", label: "Sender name", value: "Test Sender", required: true, maxLength: 250 })}
${textField({ name: "sender_account_number", label: "Sender account number (10 digits)", value: "0123456789", required: true, maxLength: 10 })}
${textField({ name: "sender_bank", label: "Sender bank", value: "Sandbox Bank", required: true, maxLength: 100 })}`,
  });
}

/** The checkout form of a payment link's page (TEST businesses, developers and owners). */
export function sandboxCheckoutForm(v: ViewCtx, reference: string, customerChoosesAmount: boolean): SafeHtml {
  return postForm({
    action: v.paths.href(`/payment-links/${encodeURIComponent(reference)}/sandbox-checkout`),
    csrf: v.csrf,
    idempotent: true,
    submit: "Run the test checkout",
    fields: html`<p class="muted">A simulated card payment through the sandbox processor: it sends the CHECKOUT_* webhooks to your endpoints.</p>
${textField({ name: "email", label: "Payer e-mail", value: "payer@example.com", required: true, maxLength: 254 })}
${textField({ name: "amount", label: "Amount (NGN)", value: customerChoosesAmount ? "1000" : "", maxLength: 20, hint: customerChoosesAmount ? "" : "empty: the link's amount" })}
${radioGroup("outcome", "Outcome", [
  { value: "success", label: "the payment succeeds" },
  { value: "failure", label: "the card is declined" },
])}`,
  });
}

/** POST /sandbox/deposits. */
export async function sandboxDepositAction(deps: DataDeps, submissions: Collection<SubmissionDoc>, caller: DashboardCaller, form: Record<string, string>): Promise<ActionResult> {
  const back = "/virtual-accounts";
  const key = form[IDEMPOTENCY_FIELD] ?? "";
  if (!KEY.test(key)) return { kind: "error", text: "Reload the page: the form's idempotency key is missing.", back };
  const body = {
    account_number: form.account_number ?? "",
    amount: /^\d+(\.\d{1,2})?$/.test(form.amount ?? "") ? Number(form.amount) : (form.amount ?? ""),
    sender_name: form.sender_name ?? "",
    sender_account_number: form.sender_account_number ?? "",
    sender_bank: form.sender_bank ?? "",
  };
  try {
    await submissions.insert({ _id: `${caller.businessId}|deposit|${key}`, businessId: caller.businessId, expiresAtMs: deps.now() + KEEP_MS });
  } catch (e) {
    if (isDuplicateKeyError(e)) return { kind: "warn", text: "This form was submitted before: nothing deposited again.", back };
    throw e;
  }
  try {
    const d = await deps.collections.sandboxDeposit(caller.businessId, body);
    const account = (d.virtualAccount ?? {}) as Record<string, unknown>;
    const to = typeof account.reference === "string" ? `/virtual-accounts/${encodeURIComponent(account.reference)}` : back;
    return d.status === "refunded"
      ? { kind: "warn", text: `Deposit refunded: ${String(d.message ?? d.reason ?? "")}`, back: to }
      : { kind: "ok", text: `Deposit ${String(d.status)}: NGN ${String(d.amount)}.`, back: to };
  } catch (e) {
    await submissions.deleteMany({ _id: `${caller.businessId}|deposit|${key}` }).catch(() => undefined);
    const text = refusalText(e);
    if (text === null) throw e;
    return { kind: "error", text: `No deposit: ${text}`, back };
  }
}

/** POST /payment-links/:reference/sandbox-checkout; null when the link is not the business's (404). */
export async function sandboxCheckoutAction(deps: DataDeps, caller: DashboardCaller, reference: string, form: Record<string, string>): Promise<ActionResult | null> {
  const back = `/payment-links/${encodeURIComponent(reference)}`;
  const key = form[IDEMPOTENCY_FIELD] ?? "";
  if (!KEY.test(key)) return { kind: "error", text: "Reload the page: the form's idempotency key is missing.", back };
  const outcome = form.outcome === "failure" ? "failure" : "success";
  try {
    const t = await deps.collections.sandboxCheckout(caller.businessId, reference, { email: form.email ?? "", amount: form.amount ?? "", outcome, token: key });
    return { kind: t.status === "failed" ? "warn" : "ok", text: `Test checkout ${String(t.reference)}: ${String(t.status)}.`, back };
  } catch (e) {
    if (isForeign(e)) return null;
    const text = refusalText(e);
    if (text === null) throw e;
    return { kind: "error", text: `No checkout: ${text}`, back };
  }
}
