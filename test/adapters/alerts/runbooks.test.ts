/**
 * Every alert's runbook link points at a section of docs/operations.md that says what the alert means
 * and what to do (issue 14: "a runbook section per alert").
 */
import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { SIGNALS, buildAlert } from "../../../adapters/alerts/context.ts";

const OPERATIONS = readFileSync(new URL("../../../docs/operations.md", import.meta.url), "utf8");

/** The text of the section the anchor opens (up to the next anchor or top-level heading). */
function section(anchor: string): string | null {
  const start = OPERATIONS.indexOf(`<a id="${anchor}"></a>`);
  if (start < 0) return null;
  const rest = OPERATIONS.slice(start + anchor.length + 13);
  const end = rest.search(/\n<a id=|\n## /);
  return end < 0 ? rest : rest.slice(0, end);
}

test("each signal's runbook anchor opens a section with its name, what it means and what to do", () => {
  for (const [signal, info] of Object.entries(SIGNALS)) {
    const alert = buildAlert({ id: "x", kind: "immediate", signal: signal as keyof typeof SIGNALS, environment: "test", runbookBase: "docs/operations.md", firstOccurrence: 0, lastOccurrence: 0, count: 1 });
    assert.is(alert.runbook, `docs/operations.md#${info.anchor}`);
    const text = section(info.anchor);
    assert.ok(text, `docs/operations.md has no section for ${signal} (#${info.anchor})`);
    assert.match(text!, new RegExp(`^\\s*### ${signal} \\(`), `the section is headed ${signal}`);
    assert.match(text!, /\*\*Means\*\*: \S/, `${signal}: what it means`);
    assert.match(text!, /\*\*Do\*\*: \S/, `${signal}: what to do`);
  }
});

test("the delivery failure has its runbook too", () => {
  const text = section("alert-chat_alert_delivery_failed");
  assert.ok(text);
  assert.match(text!, /\*\*Do\*\*: .*dead-letters/s);
});

test.run();
