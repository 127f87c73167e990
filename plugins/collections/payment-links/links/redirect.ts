/**
 * Where a successful checkout sends the payer: the link's `redirect_link` (spec §2.2), an absolute
 * http(s) URL checked when the link is created and again when it is used (a value stored before
 * creation validated it strictly must never become a broken or unsafe Location).
 */

export const MAX_REDIRECT_LENGTH = 2048;

/**
 * Where a successful payment sends the payer: the stored `redirect_link` serialised by the URL
 * standard (always a valid Location value: ASCII, no CR/LF/NUL), or null when there is none or it
 * is unusable (a value stored before creation validated it strictly). Never throws.
 */
export function redirectTarget(stored: string | null | undefined): string | null {
  if (!stored || !isRedirectUrl(stored)) return null;
  return new URL(stored).href;
}

/** An absolute http(s) URL with a host, no credentials, no whitespace or control characters. */
export function isRedirectUrl(s: string): boolean {
  if (s.length > MAX_REDIRECT_LENGTH || _WHITESPACE_OR_CONTROL.test(s) || !URL.canParse(s)) return false;
  const u = new URL(s);
  return (u.protocol === "https:" || u.protocol === "http:") && u.hostname !== "" && u.username === "" && u.password === "";
}

// --- Internal helpers ---

// eslint-disable-next-line no-control-regex
const _WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f-\u009f]/;
