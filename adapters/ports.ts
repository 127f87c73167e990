/**
 * Ports: the interfaces behind which every external system sits (ARCHITECTURE.md §5).
 * Plugins and pipeline stages see only these types; the composition root (boot/main.ts)
 * picks the implementations from config.
 */

export * from "./ports/document-store.ts";
export * from "./ports/coordination.ts";
export * from "./ports/webhooks.ts";
export * from "./ports/email.ts";
export * from "./ports/payments.ts";
export * from "./ports/billing.ts";
export * from "./ports/alerts.ts";
export * from "./ports/dependency-health.ts";
export * from "./ports/attestation.ts";
