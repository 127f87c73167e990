/**
 * The console's side of "no drift": which console action records each Admin API mutation, which
 * mutations have no console action yet (with the reason), and which console actions have no Admin
 * API counterpart on purpose. test/plugins/console/drift.test.ts walks the gateway's route table
 * and fails when an Admin API mutation is in neither list, or a console action is in none.
 * Route ids are "METHOD path" with the console's default base path.
 */

/** Admin API mutation → the console action that calls the same service. */
export const CONSOLE_ACTIONS: Readonly<Record<string, string>> = {
  "POST /admin/sign-attempts/:operationId/resolution": "POST /console/frozen/:kind/:id/resolution",
  "POST /admin/transmissions/:operationId/resolution": "POST /console/frozen/:kind/:id/resolution",
  "POST /admin/invoices/:invoiceId/resolution": "POST /console/frozen/:kind/:id/resolution",
  "POST /admin/alerts/dead-letters/:alertId/replay": "POST /console/alerts/:alertId/replay",
  "POST /admin/keys/:keyId/revoke": "POST /console/businesses/:businessId/keys/:keyId/revoke",
  "POST /admin/keys/:keyId/roll": "POST /console/businesses/:businessId/keys/:keyId/roll",
  "POST /admin/keys": "POST /console/businesses/:businessId/keys",
  "PATCH /admin/keys/:keyId": "POST /console/businesses/:businessId/keys/:keyId/allowlist",
  "POST /admin/domains/:host/approval": "POST /console/businesses/:businessId/domains/:host/approval",
  "POST /admin/domains/:host/mode-change": "POST /console/businesses/:businessId/domains/:host/mode-change",
  "PATCH /admin/domains/:host": "POST /console/businesses/:businessId/domains/:host/settings",
  "POST /admin/sub-businesses/:gatewaySubBusinessId/identity-reviews/:reviewId/decision": "POST /console/businesses/:businessId/sub-businesses/:gatewaySubBusinessId/identity-reviews/:reviewId/decision",
  "POST /admin/sub-businesses/:gatewaySubBusinessId/identity-migrations": "POST /console/businesses/:businessId/sub-businesses/:gatewaySubBusinessId/identity-migrations",
  "POST /admin/wallets/:businessId/credits": "POST /console/businesses/:businessId/wallet/credits",
  "POST /admin/wallets/:businessId/suspension": "POST /console/businesses/:businessId/wallet/suspension",
  "POST /admin/webhooks/deliveries/:webhookId/resend": "POST /console/webhooks/:webhookId/resend",
};

/** Admin API mutations the console does not offer yet (docs/operator-console.md "Not built yet"). */
export const NOT_IN_CONSOLE_YET: Readonly<Record<string, string>> = {
  "POST /admin/demo/reset": "demo configs only: resetting the demo stays an API call on purpose",
};

/** Console actions with no Admin API counterpart, on purpose. */
export const CONSOLE_ONLY: readonly string[] = ["POST /console/sign-in", "POST /console/sign-out"];
