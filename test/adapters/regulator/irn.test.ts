/**
 * adapters/regulator/irn.ts: the IRN format and its binding to a business through the IRN template,
 * in both template forms (plain, and the real answer's placeholders with example text).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { irnMatchesTemplate, parseIrn, serviceIdOfTemplate } from "../../../adapters/regulator/irn.ts";

test("parseIrn: {InvoiceNo}-{ServiceID}-{YYYYMMDD} with a real date", () => {
  assert.equal(parseIrn("INV001-94ND90NR-20240611"), { irn: "INV001-94ND90NR-20240611", invoiceNumber: "INV001", serviceId: "94ND90NR" });
  for (const bad of ["INV-001-94ND90NR-20240611", "INV001-94ND90N-20240611", "INV001-94ND90NR-2024061", "INV001-94ND90NR-20240231", "", 42, null]) {
    assert.is(parseIrn(bad), null, String(bad));
  }
});

test("serviceIdOfTemplate: the plain form, the real example-text form, inner spaces", () => {
  assert.is(serviceIdOfTemplate("{{invoice_id}}-94ND90NR-{{YYYYMMDD}}"), "94ND90NR");
  assert.is(serviceIdOfTemplate("{{invoice_id(e.g:INV00XXX)}}-59854B81-{{YYYYMMDD(e.g:20250629)}}"), "59854B81");
  assert.is(serviceIdOfTemplate("{{ invoice_id (e.g: INV00XXX) }}-E88AF03A-{{ YYYYMMDD (e.g: 20240930) }}"), "E88AF03A");
});

test("serviceIdOfTemplate: forms the IRN format cannot follow → null", () => {
  for (const t of [
    "INV-{{invoice_id}}-{{YYYYMMDD}}",
    "{{invoice_id}}-59854B8-{{YYYYMMDD}}",
    "{{YYYYMMDD}}-59854B81-{{invoice_id}}",
    "{{invoice_id}}-59854B81-{{YYYYMMDD}}-X",
    "{{invoice_id(e.g:{{x}})}}-59854B81-{{YYYYMMDD}}",
    "",
    null,
  ]) {
    assert.is(serviceIdOfTemplate(t), null, String(t));
  }
});

test("irnMatchesTemplate: the IRN carries the template's service ID", () => {
  const real = "{{invoice_id(e.g:INV00XXX)}}-59854B81-{{YYYYMMDD(e.g:20250629)}}";
  assert.ok(irnMatchesTemplate("INV001-59854B81-20250629", real));
  assert.ok(irnMatchesTemplate("INV00XXX-59854B81-20250629", real));
  assert.not.ok(irnMatchesTemplate("INV001-94ND90NR-20250629", real));
  assert.not.ok(irnMatchesTemplate("INV001-59854b81-20250629", real), "case-sensitive");
  assert.not.ok(irnMatchesTemplate("INV001-59854B81-20250629", null));
  assert.not.ok(irnMatchesTemplate("INV001-59854B81-20250629", "INV-{{invoice_id}}-{{YYYYMMDD}}"));
});

test.run();
