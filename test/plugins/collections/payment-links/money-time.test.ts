/** Money and time helpers of the collections plugin: kobo conversions, the capped fee, window dates. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { feeKobo, formatNgn, koboToNgn, ngnToKobo, parseNgnText, split } from "../../../../plugins/collections/shared/money.ts";
import { formatTime, parseWindowEdge } from "../../../../plugins/collections/shared/time.ts";

const FEE = { percent: 1.5, capKobo: 2_000_00 };

test("NGN ↔ kobo without floating-point drift", () => {
  assert.is(ngnToKobo(0.29), 29);
  assert.is(ngnToKobo(1234.56), 123_456);
  assert.is(ngnToKobo(100.123), null);
  assert.is(ngnToKobo(Number.POSITIVE_INFINITY), null);
  assert.is(koboToNgn(123_456), 1234.56);
  assert.is(parseNgnText("1,500.5"), 150_050);
  assert.is(parseNgnText(" 100 "), 10_000);
  assert.is(parseNgnText("1e3"), null);
  assert.is(parseNgnText("-5"), null);
  assert.is(parseNgnText("1.234"), null);
  assert.is(formatNgn(123_456_789), "1,234,567.89");
  assert.is(formatNgn(5), "0.05");
});

test("fee: percent of the amount, rounded half-up to the kobo, capped", () => {
  assert.is(feeKobo(10_000_00, FEE), 150_00);
  assert.is(feeKobo(100, FEE), 2, "1.5 kobo rounds up to 2");
  assert.is(feeKobo(33, FEE), 0, "0.495 kobo rounds down");
  assert.is(feeKobo(200_000_00, FEE), 2_000_00, "capped at NGN 2,000");
  assert.is(feeKobo(1_000_000_00, FEE), 2_000_00);
  assert.equal(split(10_000_00, "MERCHANT", FEE), { amountKobo: 10_000_00, feeKobo: 150_00, chargeKobo: 10_000_00, netKobo: 9_850_00 });
  assert.equal(split(10_000_00, "CUSTOMER", FEE), { amountKobo: 10_000_00, feeKobo: 150_00, chargeKobo: 10_150_00, netKobo: 10_000_00 });
});

test("formatTime writes toISOString's date and time (a space for the T), at day and year edges and at random instants", () => {
  const iso = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace("T", " ");
  const edges = [0, 999, 86_399_999, 86_400_000, 951_782_400_000, 4_107_542_399_999, 253_402_300_799_999, 253_402_300_800_000, -1, -62_167_219_200_000];
  for (const ms of edges) assert.is(formatTime(ms), iso(ms), String(ms));
  for (let i = 0; i < 20_000; i++) {
    const ms = Math.floor(Math.random() * 253_402_300_800_000);
    assert.is(formatTime(ms), iso(ms), String(ms));
  }
  for (let day = 0; day < 40_000; day += 7) assert.is(formatTime(day * 86_400_000 + 86_399_999), iso(day * 86_400_000 + 86_399_999));
});

test("window edges: dates are whole UTC days; date-times honour offsets; nonsense is null", () => {
  assert.is(parseWindowEdge("2025-03-01", "start"), Date.UTC(2025, 2, 1));
  assert.is(parseWindowEdge("2025-03-01", "end"), Date.UTC(2025, 2, 2) - 1);
  assert.is(parseWindowEdge("2025-03-01T09:30:00Z", "start"), Date.UTC(2025, 2, 1, 9, 30));
  assert.is(parseWindowEdge("2025-03-01T09:30", "start"), Date.UTC(2025, 2, 1, 9, 30), "no offset: UTC");
  assert.is(parseWindowEdge("2025-03-01 09:30:00", "start"), Date.UTC(2025, 2, 1, 9, 30));
  assert.is(parseWindowEdge("2025-03-01T09:30:00+01:00", "start"), Date.UTC(2025, 2, 1, 8, 30));
  assert.is(parseWindowEdge("2025-03-01T09:30:00.250-0230", "start"), Date.UTC(2025, 2, 1, 12, 0, 0, 250));
  for (const bad of ["2025-02-29", "2025-13-01", "2025-01-01T24:00:00Z", "01/02/2025", "2025-1-1", "", "2025-01-01T10:00:00+25:00"])
    assert.is(parseWindowEdge(bad, "start"), null, bad);
  assert.is(parseWindowEdge("2024-02-29", "start"), Date.UTC(2024, 1, 29), "leap day");
  assert.is(formatTime(Date.UTC(2025, 0, 2, 3, 4, 5, 678)), "2025-01-02 03:04:05");
});

test.run();
