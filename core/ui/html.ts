/**
 * The one way server-rendered pages build HTML: a tagged template whose every interpolation is
 * escaped unless it is already markup built the same way (`SafeHtml`) or explicitly trusted with
 * `raw()`. Arrays are joined, null/undefined/false render nothing. Escaping covers element content
 * and quoted attribute values; URLs in attributes come from `href()`-style helpers (core/ui/paths.ts),
 * never from input, so a hostile string can never become markup.
 *
 * h3's own `html` builds a whole Response (not a fragment that composes into a layout), so the kit
 * keeps its own fragment type.
 */

/** Markup that is safe to embed as-is: built by `html` or trusted with `raw`. */
export class SafeHtml {
  readonly value: string;
  constructor(value: string) {
    this.value = value;
  }
  toString(): string {
    return this.value;
  }
}

/** A value an `html` template accepts. */
export type HtmlValue = SafeHtml | string | number | bigint | boolean | null | undefined | readonly HtmlValue[];

/** Escapes text for element content and quoted attribute values. */
export function escapeHtml(s: string): string {
  return s.replace(ESCAPE_RE, (c) => ESCAPES[c]!);
}

/** Tagged template: `html\`<p>${userText}</p>\`` escapes `userText`; nested `html` fragments stay markup. */
export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): SafeHtml {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += _render(values[i]) + strings[i + 1]!;
  return new SafeHtml(out);
}

/** Trusted markup used without escaping: only for constants the code itself wrote, never input. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

/** Fragments joined with an optional separator (itself markup). */
export function joinHtml(parts: readonly HtmlValue[], separator: SafeHtml = EMPTY): SafeHtml {
  return new SafeHtml(parts.map(_render).join(separator.value));
}

export function isSafeHtml(v: unknown): v is SafeHtml {
  return v instanceof SafeHtml;
}

export const EMPTY = new SafeHtml("");

// --- Internal helpers ---

const ESCAPE_RE = /[&<>"'`]/g;
const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "`": "&#96;" };

function _render(v: HtmlValue): string {
  if (v === null || v === undefined || v === false) return "";
  if (v instanceof SafeHtml) return v.value;
  if (Array.isArray(v)) return (v as readonly HtmlValue[]).map(_render).join("");
  return escapeHtml(String(v));
}
