/**
 * The dashboard's Webhooks section (docs/dashboard.md "Webhooks"): its navigation entry and routes.
 * Pages in webhook-pages.ts, actions in webhook-actions.ts. Viewers read; developers and owners
 * change (the guards in ../auth.ts enforce the role on every POST).
 */
import { acting, viewing } from "../auth.ts";
import { getPage, postPage } from "../routes.ts";
import type { DashboardSection } from "../sections.ts";
import { createEndpointAction, resendAction, revealAction, rotateAction, testEventAction, toggleAction, updateEndpointAction } from "./webhook-actions.ts";
import { deliveryScreen, endpointScreen, webhooksScreen } from "./webhook-pages.ts";

export const webhooksSection: DashboardSection = {
  nav: { label: "Webhooks", path: "/webhooks" },
  routes: (env) => [
    getPage(env, "/webhooks", "webhook endpoints and the delivery log", viewing(env, (ctx, who) => webhooksScreen(env, ctx, who))),
    postPage(env, "/webhooks/endpoints", "add a webhook endpoint", acting(env, "developer", (ctx, who, f) => createEndpointAction(env, ctx, who, f))),
    getPage(env, "/webhooks/endpoints/:endpointId", "one webhook endpoint", viewing(env, (ctx, who) => endpointScreen(env, ctx, who))),
    postPage(env, "/webhooks/endpoints/:endpointId", "edit a webhook endpoint", acting(env, "developer", (ctx, who, f) => updateEndpointAction(env, ctx, who, f))),
    postPage(env, "/webhooks/endpoints/:endpointId/enabled", "disable or enable a webhook endpoint", acting(env, "developer", (ctx, who, f) => toggleAction(env, ctx, who, f))),
    postPage(env, "/webhooks/endpoints/:endpointId/rotate", "rotate a webhook secret", acting(env, "developer", (ctx, who) => rotateAction(env, ctx, who))),
    postPage(env, "/webhooks/endpoints/:endpointId/reveal", "reveal a webhook secret (TOTP)", acting(env, "developer", (ctx, who, f) => revealAction(env, ctx, who, f))),
    postPage(env, "/webhooks/endpoints/:endpointId/test", "send a test event", acting(env, "developer", (ctx, who, f) => testEventAction(env, ctx, who, f))),
    getPage(env, "/webhooks/deliveries/:webhookId", "one webhook delivery", viewing(env, (ctx, who) => deliveryScreen(env, ctx, who))),
    postPage(env, "/webhooks/deliveries/:webhookId/resend", "resend a webhook delivery", acting(env, "developer", (ctx, who, f) => resendAction(env, ctx, who, f))),
  ],
};
