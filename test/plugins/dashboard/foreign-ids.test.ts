/**
 * Another business's identifiers typed into dashboard URLs: every dashboard route with a path
 * parameter (taken from the gateway's route table, so a new route is walked without editing this
 * test) is called, GET and POST, by a signed-in owner of business "demo" with the ids of business
 * "other" (its invoice, sign operation, represented business, payment link, virtual account,
 * customer), and answers 404 with nothing of the other business in the page; the same ids of the
 * owner's own business answer (proving the walk reaches the screens). Nothing of "other" changes.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openStoredInvoices } from "../../../plugins/invoice/stored-invoices.ts";
import { gatewayTracker } from "../../support/gateway.ts";
import { hiddenField } from "./dashboard-helpers.ts";
import { BEARER_DEMO, BEARER_OTHER, accountBody, api, customerBody, linkBody, member, putInvoice, putRepresented, putSignRecord, storeOf } from "./data-helpers.ts";

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

/** Path parameters the dashboard's routes use, and which identifier each takes. */
type Ids = Record<"invoiceId" | "operationId" | "gatewaySubBusinessId" | "reference" | "id", string>;

/** The data screens' parameters; the others (team, keys, links, webhooks, request log) are walked by foreign-ids-team.test.ts. */
const DATA_PARAMS = new Set(["invoiceId", "operationId", "gatewaySubBusinessId", "reference", "id"]);

async function idsOf(tg: Awaited<ReturnType<typeof start>>, businessId: string, bearer: string): Promise<Ids & { linkReference: string; accountReference: string }> {
  const invoice = await putInvoice(tg, businessId, { status: "pending", irn: `FOREIGN${businessId.length}-ABCD1234-20240611` });
  const sign = await putSignRecord(tg, businessId, `SIGN${businessId.length}-ABCD1234-20240611`);
  await putRepresented(tg, businessId, `rep-${businessId}`);
  const link = await api(tg, bearer, "/api/v1/payment-link", linkBody(`Link of ${businessId}`));
  const account = await api(tg, bearer, "/api/v1/virtual-account", accountBody(`Account of ${businessId}`));
  const customer = await api(tg, bearer, "/api/v1/customers", customerBody(`Cust${businessId}`));
  return {
    invoiceId: invoice._id,
    operationId: sign.operationId,
    gatewaySubBusinessId: `rep-${businessId}`,
    reference: link.reference,
    id: customer.id,
    linkReference: link.reference,
    accountReference: account.reference,
  };
}

test("every dashboard route with an identifier answers 404 for another business's ids, GET and POST, and changes nothing", async () => {
  const tg = await start();
  const mine = await idsOf(tg, "demo", BEARER_DEMO);
  const theirs = await idsOf(tg, "other", BEARER_OTHER);
  const owner = await member(tg, "demo", "owner");
  const csrf = hiddenField(await owner.html("/dashboard"), "_csrf");
  const routes = tg.gateway.routes
    .routes()
    .map((r) => ({ method: r.decl.method, path: r.decl.path }))
    .filter((r) => r.path.startsWith("/dashboard/") && r.path.includes("/:") && [...r.path.matchAll(/:(\w+)/g)].every((m) => DATA_PARAMS.has(m[1]!)));
  assert.ok(routes.length >= 11, `the walk covers the data routes (${routes.length})`);
  const fill = (path: string, ids: Ids & { accountReference: string }) =>
    path.replace(/:(\w+)/g, (_, name: string) => {
      // Virtual accounts and payment links both name theirs `:reference`.
      const value = name === "reference" && path.startsWith("/dashboard/virtual-accounts/") ? ids.accountReference : ids[name as keyof Ids];
      if (value === undefined) throw new Error(`no identifier for :${name} in ${path}`);
      return encodeURIComponent(value);
    });
  const walked: string[] = [];
  for (const r of routes) {
    const theirPath = fill(r.path, theirs);
    const res = r.method === "GET" ? await owner.get(theirPath) : await owner.post(theirPath, { _csrf: csrf, _idempotency: "walk-key-0001", activate: "false", outcome: "success", email: "p@example.com" });
    const page = await res.text();
    assert.is(res.status, 404, `${r.method} ${r.path} with another business's ids`);
    for (const leak of ["Link of other", "Account of other", "Custother", "FOREIGN5"]) assert.not.ok(page.includes(leak), `${r.method} ${r.path} shows ${leak}`);
    if (r.method === "GET") {
      const own = await owner.get(fill(r.path, mine));
      assert.is(own.status, 200, `${r.path} answers for the business's own ids`);
    }
    walked.push(`${r.method} ${r.path}`);
  }
  for (const must of ["GET /dashboard/invoices/:invoiceId", "GET /dashboard/invoices/:invoiceId/document.json", "POST /dashboard/invoices/:invoiceId/cancel", "GET /dashboard/sign-operations/:operationId", "GET /dashboard/represented/:gatewaySubBusinessId", "GET /dashboard/payment-links/:reference", "POST /dashboard/payment-links/:reference/toggle", "GET /dashboard/virtual-accounts/:reference", "GET /dashboard/customers/:id"])
    assert.ok(walked.includes(must), `walked ${must}`);
  assert.is((await openStoredInvoices(storeOf(tg)).get(theirs.invoiceId))!.status, "pending", "the other business's invoice was not cancelled");
  const link = await api(tg, BEARER_OTHER, `/api/v1/payment-link/find-by-reference/${encodeURIComponent(theirs.linkReference)}`);
  assert.is(link.status, "active", "the other business's link was not toggled");
});

test.run();
