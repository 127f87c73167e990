/**
 * The key forms (developer or owner): create (which API, IP allowlist, a code), and a live key's
 * roll (the old key's grace hours, a code), IP allowlist (a code) and revoke (a confirmation box).
 * Each carries the session's CSRF token and an idempotency key minted when the page is drawn. The
 * actions that receive them are in key-actions.ts.
 */
import type { CredentialDoc } from "../../../core/directory-store.ts";
import { html, postForm, radioGroup, segment, textField, type SafeHtml } from "../../../core/ui/index.ts";
import { totpField } from "../auth.ts";
import type { DashboardEnv, Viewer } from "../env.ts";

/** The create-key form (developer or owner). */
export function createKeyForm(env: DashboardEnv, who: Viewer): SafeHtml {
  return html`<section class="panel" aria-labelledby="new-key-h"><h2 id="new-key-h">Create a key</h2>${postForm({
    action: env.paths.href("/keys"),
    csrf: env.cookies.csrfToken(who.session),
    idempotent: true,
    submit: "Create key",
    fields: html`${radioGroup("scheme", "Which API", [
      { value: "gateway", label: "Invoice gateway (x-api-key)" },
      { value: "collections", label: "Collections (Authorization: Bearer)" },
    ])}
${textField({ name: "ipWhitelisted", label: "IP allowlist", hint: "Addresses or CIDR ranges, comma separated; empty: any address.", maxLength: 2000 })}
${totpField()}`,
  })}</section>`;
}

/** A live key's forms: roll, revoke, allowlist (developer or owner). */
export function keyForms(env: DashboardEnv, who: Viewer, k: CredentialDoc): SafeHtml {
  const base = `/keys/${segment(k.credentialId)}`;
  const csrf = env.cookies.csrfToken(who.session);
  const roll = postForm({
    action: env.paths.href(`${base}/roll`),
    csrf,
    idempotent: true,
    submit: "Roll key",
    fields: html`${textField({ name: "graceHours", label: "Old key keeps working for (hours)", value: "24", type: "number", maxLength: 4 })}${totpField()}`,
  });
  const acl = postForm({
    action: env.paths.href(`${base}/allowlist`),
    csrf,
    idempotent: true,
    submit: "Save allowlist",
    fields: html`${textField({ name: "ipWhitelisted", label: "IP allowlist", value: k.ipWhitelisted.join(", "), hint: "Addresses or CIDR ranges, comma separated; empty: any address.", maxLength: 2000 })}${totpField()}`,
  });
  const revoke = postForm({
    action: env.paths.href(`${base}/revoke`),
    csrf,
    idempotent: true,
    button: "danger",
    submit: "Revoke key",
    fields: html`<div><input type="checkbox" id="rv-confirm" name="confirm" value="yes" required> <label for="rv-confirm" class="inline-label">Revoke now: callers with this key are refused at once</label></div>`,
  });
  return html`<div class="grid"><section class="panel" aria-labelledby="roll-h"><h2 id="roll-h">Roll</h2>${roll}</section>
<section class="panel" aria-labelledby="acl-h"><h2 id="acl-h">IP allowlist</h2>${acl}</section>
<section class="panel" aria-labelledby="rv-h"><h2 id="rv-h">Revoke</h2>${revoke}</section></div>`;
}
