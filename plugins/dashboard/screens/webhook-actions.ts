/**
 * The Webhooks screen's actions (POST-redirect-GET with a flash), each through the service its Admin
 * API twin calls: the directory's endpoint service (add, edit, disable/enable, rotate, reveal with a
 * fresh TOTP code), the test event (core/webhook-events.ts) and resend (core/webhook-deliveries.ts),
 * both idempotent on the form's key. Audited with the user's identity ("user:<id>"); a bad input
 * comes back as the flash, never an error page. Another business's ids are "not found".
 */
import type { RequestContext } from "../../../core/context.ts";
import { openDirectoryStore } from "../../../core/directory-store.ts";
import type { WebhookActor, WebhookService } from "../../../core/directory.ts";
import { isGatewayError } from "../../../core/errors/gateway-error.ts";
import { IDEMPOTENCY_FIELD, segment, type Flash } from "../../../core/ui/index.ts";
import { resendDelivery, WEBHOOK_ID_PATTERN } from "../../../core/webhook-deliveries.ts";
import { sendTestEvent } from "../../../core/webhook-events.ts";
import { requireFreshTotp } from "../auth.ts";
import { back } from "../chrome.ts";
import type { DashboardEnv, Viewer } from "../env.ts";
import { endpointScreen } from "./webhook-pages.ts";

export async function createEndpointAction(env: DashboardEnv, ctx: RequestContext, who: Viewer, form: Record<string, string>): Promise<Response> {
  const input = { url: (form.url ?? "").trim(), services: _services(form), description: (form.description ?? "").trim() };
  return _attempt(env, ctx, "/webhooks", async () => {
    const ep = await env.kit.directory.webhooks.create(_actor(ctx, who), who.business.id, input);
    return { location: `/webhooks/endpoints/${segment(ep.id)}`, flash: { kind: "ok", text: "Endpoint added. Reveal its secret to configure your receiver, then send a test event." } };
  });
}

export async function updateEndpointAction(env: DashboardEnv, ctx: RequestContext, who: Viewer, form: Record<string, string>): Promise<Response> {
  const here = _here(ctx);
  const patch = { url: (form.url ?? "").trim(), services: _services(form), description: (form.description ?? "").trim() };
  return _attempt(env, ctx, here, async () => {
    const ep = await env.kit.directory.webhooks.update(_actor(ctx, who), who.business.id, ctx.params.endpointId ?? "", patch);
    return ep ? { location: here, flash: { kind: "ok", text: "Saved." } } : _gone();
  });
}

export async function toggleAction(env: DashboardEnv, ctx: RequestContext, who: Viewer, form: Record<string, string>): Promise<Response> {
  const here = _here(ctx);
  const enabled = form.enabled === "true";
  return _attempt(env, ctx, here, async () => {
    const ep = await env.kit.directory.webhooks.update(_actor(ctx, who), who.business.id, ctx.params.endpointId ?? "", { enabled });
    return ep ? { location: here, flash: { kind: "ok", text: enabled ? "Enabled: new events are sent to it again." : "Disabled: new events are not sent to it." } } : _gone();
  });
}

export async function rotateAction(env: DashboardEnv, ctx: RequestContext, who: Viewer): Promise<Response> {
  const here = _here(ctx);
  return _attempt(env, ctx, here, async () => {
    const ep = await env.kit.directory.webhooks.rotate(_actor(ctx, who), who.business.id, ctx.params.endpointId ?? "");
    const until = ep?.secrets.find((s) => s.expiresAtMs !== null)?.expiresAtMs;
    return ep
      ? { location: here, flash: { kind: "ok", text: `Rotated. Deliveries carry both signatures${until ? ` until ${new Date(until).toISOString()}` : ""}; reveal the new secret and update your receiver.` } }
      : _gone();
  });
}

/** Reveal: a fresh TOTP code, then the endpoint page with the secret once (not cached, not redirected). */
export async function revealAction(env: DashboardEnv, ctx: RequestContext, who: Viewer, form: Record<string, string>): Promise<Response> {
  const here = _here(ctx);
  const fresh = await requireFreshTotp(env, ctx, who, form);
  if (!fresh.ok) return back(env, ctx, env.paths.href(here), fresh.flash);
  const r = await env.kit.directory.webhooks.revealSecret(_actor(ctx, who), who.business.id, ctx.params.endpointId ?? "");
  if (!r) return back(env, ctx, env.paths.href("/webhooks"), _gone().flash, fresh.headers);
  const res = await endpointScreen(env, ctx, who, r.secret);
  for (const [, v] of fresh.headers) res.headers.append("set-cookie", v);
  return res;
}

export async function testEventAction(env: DashboardEnv, ctx: RequestContext, who: Viewer, form: Record<string, string>): Promise<Response> {
  const here = _here(ctx);
  const key = form[IDEMPOTENCY_FIELD] ?? "";
  const outbox = env.kit.ports.webhooks;
  if (!outbox || !/^[A-Za-z0-9_-]{8,128}$/.test(key)) return back(env, ctx, env.paths.href(here), { kind: "error", text: "Reload the page and try again (the form's key is missing)." });
  const r = await sendTestEvent(outbox, env.kit.directory, who.business.id, ctx.params.endpointId ?? "", key, env.now());
  if (!r) return back(env, ctx, env.paths.href("/webhooks"), _gone().flash);
  env.kit.log.event("dashboard_action", { requestId: ctx.requestId, actor: _actor(ctx, who).actor, action: "webhook_endpoint.test", endpointId: ctx.params.endpointId, webhookId: r.webhookId });
  return back(env, ctx, env.paths.href(`/webhooks/deliveries/${segment(r.webhookId)}`), { kind: "ok", text: r.created ? "Test event sent: its attempts appear below." : "Already sent with this form." });
}

export async function resendAction(env: DashboardEnv, ctx: RequestContext, who: Viewer, form: Record<string, string>): Promise<Response> {
  const id = ctx.params.webhookId ?? "";
  const here = WEBHOOK_ID_PATTERN.test(id) ? `/webhooks/deliveries/${segment(id)}` : "/webhooks";
  const key = form[IDEMPOTENCY_FIELD] ?? "";
  const log = env.kit.ports.webhooks?.deliveries;
  if (!log || !/^[A-Za-z0-9_-]{8,128}$/.test(key)) return back(env, ctx, env.paths.href(here), { kind: "error", text: "Reload the page and try again (the form's key is missing)." });
  const r = await resendDelivery(log, openDirectoryStore(env.store).audit, _actor(ctx, who), id, key, who.business.id, env.now());
  if (!r) return back(env, ctx, env.paths.href("/webhooks"), { kind: "error", text: "No such delivery." });
  const flash: Flash =
    r.reason === "no_endpoint"
      ? { kind: "error", text: "This event was recorded without an endpoint; there is nowhere to send it." }
      : { kind: "ok", text: r.resent ? "Resent: one more attempt is on its way." : "Already resent with this form; nothing more was sent." };
  return back(env, ctx, env.paths.href(here), flash);
}

// --- Internal helpers ---

function _actor(ctx: RequestContext, who: Viewer): WebhookActor {
  return { actor: `user:${who.user._id}`, requestId: ctx.requestId };
}

function _here(ctx: RequestContext): string {
  return `/webhooks/endpoints/${segment(ctx.params.endpointId ?? "")}`;
}

function _services(form: Record<string, string>): WebhookService[] {
  return (["invoice", "collections"] as const).filter((s) => form[`service_${s}`] === "on");
}

function _gone(): { location: string; flash: Flash } {
  return { location: "/webhooks", flash: { kind: "error", text: "No such endpoint." } };
}

/** Runs a change; a validation error becomes the flash (each field's problem), anything else propagates. */
async function _attempt(env: DashboardEnv, ctx: RequestContext, onError: string, fn: () => Promise<{ location: string; flash: Flash }>): Promise<Response> {
  try {
    const r = await fn();
    return back(env, ctx, env.paths.href(r.location), r.flash);
  } catch (e) {
    if (!isGatewayError(e) || e.code !== "GW_REQUEST_VALIDATION_FAILED") throw e;
    const problems = (e.info.violations ?? []).map((v) => `${(v.pointer ?? v.field ?? "").replace(/^\//, "")}: ${v.detail}`).join("; ");
    return back(env, ctx, env.paths.href(onError), { kind: "error", text: `Not saved: ${problems}.` });
  }
}
