/**
 * Forms that work without JavaScript: every field has a label, every POST form carries the
 * session's CSRF token and, for actions that must happen once, an idempotency key minted when the
 * form is drawn (a double submit sends the same key). Handlers answer a POST with `seeOther`
 * (POST-redirect-GET), so a reload never repeats it.
 */
import { randomUUID } from "node:crypto";
import { FastResponse } from "srvx";
import type { RequestContext } from "../context.ts";
import { built } from "../respond.ts";
import { EMPTY, html, type HtmlValue, type SafeHtml } from "./html.ts";

/** The hidden field names the kit's forms use. */
export const CSRF_FIELD = "_csrf";
export const IDEMPOTENCY_FIELD = "_idempotency";

export interface FieldOptions {
  name: string;
  label: string;
  value?: string;
  type?: "text" | "password" | "search" | "number";
  required?: boolean;
  hint?: string;
  autocomplete?: string;
  maxLength?: number;
}

export function textField(f: FieldOptions): SafeHtml {
  const id = `f-${f.name}`;
  const hintId = f.hint ? `${id}-hint` : null;
  return html`<div><label for="${id}">${f.label}</label>${f.hint ? html`<span class="muted" id="${hintId}">${f.hint}</span>` : EMPTY}
<input id="${id}" name="${f.name}" type="${f.type ?? "text"}" value="${f.value ?? ""}"${f.required ? html` required` : EMPTY}${
    f.autocomplete ? html` autocomplete="${f.autocomplete}"` : EMPTY
  }${f.maxLength ? html` maxlength="${f.maxLength}"` : EMPTY}${hintId ? html` aria-describedby="${hintId}"` : EMPTY}></div>`;
}

export interface Choice {
  value: string;
  label: string;
}

/** A required choice as radio buttons in a fieldset whose legend names it. */
export function radioGroup(name: string, legend: string, choices: readonly Choice[]): SafeHtml {
  return html`<fieldset><legend>${legend}</legend>${choices.map(
    (c, i) => html`<div><input type="radio" id="f-${name}-${i}" name="${name}" value="${c.value}" required> <label for="f-${name}-${i}">${c.label}</label></div>`,
  )}</fieldset>`;
}

export interface PostFormOptions {
  action: string;
  csrf: string;
  /** Mint an idempotency key into the form (actions that must take effect once). */
  idempotent?: boolean;
  fields?: HtmlValue;
  submit: string;
  /** "stack" (default), "inline"; and a button style. */
  layout?: "stack" | "inline";
  button?: "primary" | "secondary" | "danger";
}

export function postForm(o: PostFormOptions): SafeHtml {
  return html`<form method="post" action="${o.action}" class="${o.layout ?? "stack"}">
<input type="hidden" name="${CSRF_FIELD}" value="${o.csrf}">${o.idempotent ? html`<input type="hidden" name="${IDEMPOTENCY_FIELD}" value="${randomUUID()}">` : EMPTY}
${o.fields ?? EMPTY}
<div><button type="submit"${o.button && o.button !== "primary" ? html` class="${o.button}"` : EMPTY}>${o.submit}</button></div>
</form>`;
}

/** The submitted form's fields (the core parses application/x-www-form-urlencoded bodies). */
export function formFields(ctx: RequestContext): Record<string, string> {
  const b = ctx.body;
  if (!b || typeof b !== "object") return {};
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(b as Record<string, unknown>)) if (typeof v === "string") out[k] = v;
  return out;
}

/** 303 See Other to `location` (POST-redirect-GET), with extra headers (Set-Cookie). */
export function seeOther(ctx: RequestContext, location: string, headers: Array<[string, string]> = []): Response {
  const h = new Headers([["location", location], ["cache-control", "no-store"], ["x-request-id", ctx.requestId], ["content-length", "0"], ...headers]);
  // srvx's response type: the gateway's node server writes it directly.
  return built(new FastResponse(null, { status: 303, headers: h }), 0);
}
