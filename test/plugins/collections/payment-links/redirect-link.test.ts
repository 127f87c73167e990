/**
 * Issue 18 item 3: a stored value never breaks the payer's page. `redirect_link` is validated
 * strictly at creation (absolute http/https with a host, no credentials, no whitespace or control
 * characters, at most 2048 characters), the redirect uses the URL standard's serialisation (always
 * a valid Location), and a link stored before this validation (CR/LF in its redirect) still takes a
 * successful payment to the success page, never to an error page. Over real HTTP.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LINKS_COLLECTION } from "../../../../plugins/collections/payment-links/links/link.ts";
import { expectContractShape } from "../../../support/assertions.ts";
import { httpCall } from "../../../support/raw-http.ts";
import { BEARER_DEMO, HOST, sourceRef, startCollections } from "./collections-helpers.ts";

const h = await startCollections();
const server = await h.tg.listen();
test.after(() => h.close());

async function create(redirect: unknown) {
  const source = sourceRef("redir");
  const res = await httpCall(server.url, "/api/v1/payment-link", {
    method: "POST",
    host: HOST,
    headers: { authorization: `Bearer ${BEARER_DEMO}`, "content-type": "application/json" },
    body: JSON.stringify({ link_name: "Redirect", narration: "Order", fee_bearer: "MERCHANT", source_reference: source, redirect_link: redirect }),
  });
  return { res, source };
}

/** Opens the checkout page and pays it over real HTTP; answers the form submission. */
async function payOverHttp(reference: string) {
  const form = await httpCall(server.url, `/pay/${reference}`, { host: HOST });
  const token = /name="checkout_token" value="([^"]+)"/.exec(form.text)?.[1] ?? "";
  return httpCall(server.url, `/pay/${reference}`, {
    method: "POST",
    host: HOST,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ checkout_token: token, email: "payer@example.com", amount: "150" }).toString(),
  });
}

async function balanceKobo(): Promise<number> {
  const page = await h.store.collection<{ _id: string; businessId: string; amountKobo: number }>("collections_wallet_entries").find({ businessId: "demo" }, { limit: 1000 });
  return page.items.reduce((s, e) => s + e.amountKobo, 0);
}

test("redirect_link with CR/LF, NUL, a tab, a space, credentials, a relative or non-http URL, or over 2048 characters: 422 naming redirect_link, nothing created", async () => {
  for (const bad of [
    "https://example.com/a\r\nX: y",
    "https://example.com/a\u0000b",
    "https://example.com/a\tb",
    "https://example.com/a b",
    "https://user:pw@example.com/",
    "/thanks",
    "javascript:alert(1)",
    "ftp://example.com/x",
    "https://",
    `https://example.com/${"a".repeat(2_040)}`,
    42,
  ]) {
    const { res, source } = await create(bad);
    const body = expectContractShape({ status: res.status, headers: res.headers, body: res.text }, "collections", 422);
    assert.equal(body.errors.map((e: { field: string }) => e.field), ["redirect_link"], JSON.stringify(bad));
    assert.not.ok(res.text.includes("example.com/a"), "the value is not echoed");
    const found = await h.api(`/api/v1/payment-link/find-by-source-reference/${source}`);
    assert.is(found.status, 404, "nothing created");
  }
});

test("a non-ASCII redirect_link is accepted and redirected to its standard serialisation (a valid Location)", async () => {
  const { res } = await create("https://Shop.Example.com/ödeme?ref=naïve#top");
  assert.is(res.status, 201, res.text);
  const link = (res.json() as { data: { reference: string; redirectLink: string } }).data;
  assert.is(link.redirectLink, "https://Shop.Example.com/ödeme?ref=naïve#top", "stored as sent");
  const paid = await payOverHttp(link.reference);
  assert.is(paid.status, 303);
  assert.is(paid.headers.location, "https://shop.example.com/%C3%B6deme?ref=na%C3%AFve#top");
});

test("a link stored with CR/LF in its redirect (before strict validation): a successful payment still lands on the success page, credited", async () => {
  const { res } = await create("https://shop.example.com/thanks");
  assert.is(res.status, 201);
  const link = (res.json() as { data: { reference: string } }).data;
  // The value an earlier version accepted, written as it would be stored.
  const updated = await h.store
    .collection(LINKS_COLLECTION)
    .findOneAndUpdate({ reference: link.reference }, { $set: { redirectLink: "https://example.com/a\r\nX: y" } });
  assert.ok(updated, "the link was rewritten");
  const before = await balanceKobo();
  const paid = await payOverHttp(link.reference);
  assert.is(paid.status, 303, "never an error page");
  assert.match(paid.headers.location ?? "", new RegExp(`^/pay/${link.reference}/success/[0-9a-f-]{36}$`));
  await h.payments.idle();
  assert.is(await balanceKobo(), before + 15_000 - 225, "the payment is credited (NGN 150 less the 1.5 % fee)");
  const success = await httpCall(server.url, paid.headers.location!, { host: HOST });
  assert.is(success.status, 200);
  assert.match(success.text, "Payment successful");
  assert.not.ok(success.text.includes("Continue"), "no link to the unusable redirect");
  assert.ok(h.tg.logs.some((l) => l.event === "collections_redirect_link_unusable" && l.linkReference === link.reference));
});

test.run();
