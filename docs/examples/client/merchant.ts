/**
 * docs/client.md's walkthrough as one script, run against `npm start` (demo config):
 *
 *   npm start                                   # in one terminal
 *   npx tsx docs/examples/client/merchant.ts    # in another (PORT=3016 for another port; GATEHOUSE_URL for another host)
 *
 * It onboards the demo taxpayer, signs and transmits a Pass-through invoice, hands one over in
 * Stored mode (the Stored demo business, with its own taxpayer) and follows it to `signed`, then creates a payment link and a virtual account and
 * pays into it through the sandbox. Every send is "persisted" with its request id, key and attempt
 * number (an array here; your database in production). test/client/docs-examples.test.ts runs it.
 */
import {
  createCollectionsClient,
  createInvoiceGatewayClient,
  isGatehouseError,
  isProblemError,
  type AttemptRecord,
  type InvoiceDocument,
} from "../../../client/index.ts";

const BASE = process.env.GATEHOUSE_URL ?? `http://127.0.0.1:${process.env.PORT || 3000}`;

// --- Persist (requestId, key, attempt number) of every send before the call returns (spec §7.1 rule 3).
const sends: AttemptRecord[] = [];
const onAttempt = (r: AttemptRecord) => {
  sends.push(r); // e.g. INSERT INTO gateway_sends (...) — awaited before the client goes on
};

const passThrough = createInvoiceGatewayClient({ baseUrl: BASE, host: "passthrough.demo.localhost", apiKey: "gw_demo_key_0001", onAttempt });
// The Stored domain belongs to its own demo business (one approved domain per top-level business), with its own key.
const stored = createInvoiceGatewayClient({ baseUrl: BASE, host: "stored.demo.localhost", apiKey: "gw_demo_key_stored", onAttempt });
const collections = createCollectionsClient({ baseUrl: BASE, host: "localhost", apiKey: "sk_test_demo_0001", onAttempt });

// 1. Onboard the represented business. A fixed key makes every run answer the same business (200 after the first).
const { data: business, status } = await passThrough.subBusinesses.onboard(
  { regulatorCredentials: { email: "taxpayer@demo.ng", password: "demo-password-1" } },
  { idempotencyKey: "onboard-demo-0001" },
);
const sub = business.gatewaySubBusinessId;
console.log(`onboarded ${business.registeredName} (${sub}), HTTP ${status}, cryptoVersion ${business.cryptoVersion}`);

// 2. Sign a Pass-through invoice: billed, retried only as spec §7 allows, resolved only on a confirmed success.
const today = new Date().toISOString().slice(0, 10);
const invoiceNo = `DOC${Date.now().toString(36).toUpperCase()}`;
const document = invoiceDocument(invoiceNo, today, business.externalBusinessId, business.tin);
try {
  const signed = await passThrough.invoices.sign(sub, document);
  console.log(`signed ${document.irn}: requestId ${signed.requestId}, key ${signed.idempotencyKey}, sends ${signed.sends}`);
} catch (e) {
  if (isProblemError(e) && e.code === "GW_SIGN_REJECTED") {
    // The regulator refused it and the fee was reversed: correct the document, then a new attempt.
    console.log("rejected:", e.violations, "— correct it, then passThrough.invoices.signWithNextAttempt(sub, e, corrected)");
  } else if (isGatehouseError(e) && e.contactSupport) {
    // Unknown outcome: never resubmit. Give support what they need.
    console.error("contact support with", { requestIds: e.requestIds, key: e.idempotencyKey, code: isProblemError(e) ? e.code : e.kind });
  }
  throw e;
}

// 3. Transmit it (one transmission per IRN; a second call gets the existing operationId).
const transmitted = await passThrough.invoices.transmit(sub, String(document.irn));
console.log(`transmitted ${document.irn}: HTTP ${transmitted.status}`);

// 4. Stored mode: the Stored business represents its own taxpayer (onboarded once, as in step 1), then hands an
//    invoice over (202); the gateway validates, bills and signs it in the background.
const { data: storedBusiness } = await stored.subBusinesses.onboard(
  { regulatorCredentials: { email: "example-template@demo.ng", password: "demo-password-6" } },
  { idempotencyKey: "onboard-stored-0001" },
);
const storedSub = storedBusiness.gatewaySubBusinessId;
const storedNo = `${invoiceNo}S`;
const { business_id: _omit, irn: _leave, ...intake } = invoiceDocument(storedNo, today, storedBusiness.externalBusinessId, storedBusiness.tin);
const accepted = await stored.stored.submit(storedSub, { ...intake, invoice_reference: storedNo, accounting_supplier_party: { ...intake.accounting_supplier_party, tin: storedBusiness.tin } });
console.log(`accepted ${accepted.data.invoiceId} (${accepted.data.irn}), status ${accepted.data.status}`);
let invoice = (await stored.stored.get(accepted.data.invoiceId)).data;
for (let i = 0; i < 100 && !["signed", "rejected", "frozen"].includes(invoice.status); i++) {
  await new Promise((r) => setTimeout(r, 200));
  invoice = (await stored.stored.get(accepted.data.invoiceId)).data;
}
console.log(`stored invoice is ${invoice.status} after ${invoice.attempts} processor pass(es)`);
if (invoice.status !== "signed") throw new Error(`the stored invoice did not sign: ${JSON.stringify(invoice.lastError)}`);

// 5. Collections: a payment link, a virtual account, a sandbox deposit into it, the wallet credit.
const link = await collections.paymentLinks.create({
  link_name: "Choir robes",
  narration: "Robes for the concert",
  fee_bearer: "MERCHANT",
  source_reference: `docs-link-${invoiceNo}`,
  amount: 1500,
});
console.log(`payment link ${link.data.data.reference}: ${link.data.data.linkUrl}`);
const account = await collections.virtualAccounts.create({ account_type: "multi_use", account_name: "Docs Stores", source_reference: `docs-va-${invoiceNo}` });
const deposit = await collections.sandbox.deposit({
  account_number: account.data.data.accountNumber,
  amount: 2500,
  sender_name: "Bola Ade",
  sender_account_number: "0123456789",
  sender_bank: "Sandbox Bank",
});
console.log(`deposit into ${account.data.data.accountNumber}: ${deposit.data.data.status}`);
const credits = await collections.balances.transactions({ limit: 1 });
console.log(`latest wallet credit: NGN ${credits.data.data[0]?.amount}`);

console.log(`${sends.length} sends persisted; the last: ${JSON.stringify(sends.at(-1))}`);

// --- A regulator invoice document (the simulator enforces the regulator's documented schema) ---
function invoiceDocument(no: string, date: string, businessId: string, supplierTin: string) {
  return {
    business_id: businessId,
    irn: `${no}-94ND90NR-${date.replaceAll("-", "")}`,
    issue_date: date,
    invoice_type_code: "381",
    document_currency_code: "NGN",
    tax_currency_code: "NGN",
    accounting_supplier_party: {
      party_name: "Demo Trading Ltd",
      tin: supplierTin,
      email: "billing@demo.ng",
      telephone: "+2348012345678",
      postal_address: { street_name: "32, Owonikoko Street", city_name: "Gwarikpa", postal_zone: "023401", country: "NG" },
    },
    accounting_customer_party: {
      party_name: "Acme Buyers Ltd",
      tin: "99999999-0001",
      email: "accounts@acme.ng",
      postal_address: { street_name: "1 Marina", city_name: "Lagos", postal_zone: "101001", country: "NG" },
    },
    legal_monetary_total: { line_extension_amount: 300, tax_exclusive_amount: 300, tax_inclusive_amount: 322.5, payable_amount: 322.5 },
    invoice_line: [
      {
        hsn_code: "8471.30",
        product_category: "Computers",
        invoiced_quantity: 3,
        line_extension_amount: 300,
        item: { name: "USB keyboard", description: "Wired keyboard" },
        price: { price_amount: 100, base_quantity: 1, price_unit: "NGN per 1" },
      },
    ],
  } satisfies InvoiceDocument;
}
