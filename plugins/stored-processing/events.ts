/**
 * Invoice webhooks (DECISIONS.md "Webhooks"): body `{ type, data }`, through the durable outbox, to
 * every enabled endpoint of the top-level business receiving invoice events (the directory's
 * webhook endpoints; the config's `gateway.webhook` is one of them). A transition records its event on the invoice
 * in the same compare-and-set (`events`); enqueueing follows, idempotent per invoice and event type,
 * so a crash between the two only delays the webhook (the processor enqueues what is recorded).
 * A business without an endpoint gets no events recorded: the invoice's status history is the record.
 */
import type { WebhookEndpoint, WebhookOutbox } from "../../adapters/ports.ts";
import type { TenantDirectory } from "../../core/directory.ts";
import { eventData, type InvoiceDoc, type InvoiceEvent, type InvoiceEventType, type InvoiceStatus, type LastError } from "../invoice/stored-invoices.ts";

export interface InvoiceWebhooks {
  /** The event to record with a transition, or none when the business has no endpoint. */
  event(doc: InvoiceDoc, type: InvoiceEventType, status: InvoiceStatus, at: string, lastError?: LastError | null): InvoiceEvent[];
  /** Enqueues every recorded event (idempotent); throws when the outbox cannot confirm one. */
  enqueue(doc: Pick<InvoiceDoc, "_id" | "businessId">, events: readonly InvoiceEvent[]): Promise<void>;
}

export function createInvoiceWebhooks(directory: TenantDirectory, outbox: WebhookOutbox): InvoiceWebhooks {
  const endpointsOf = (businessId: string): WebhookEndpoint[] => directory.webhooks.targets(businessId, "invoice").map((t) => ({ id: t.id, url: t.url }));
  return {
    event(doc, type, status, at, lastError = null) {
      if (endpointsOf(doc.businessId).length === 0) return [];
      return [{ type, data: eventData(doc, status, at, lastError) }];
    },
    async enqueue(doc, events) {
      if (events.length === 0) return;
      const endpoints = endpointsOf(doc.businessId);
      for (const endpoint of endpoints)
        for (const e of events)
          await outbox.enqueue(
            { businessId: doc.businessId, eventType: e.type, payload: { type: e.type, data: e.data }, idempotencyKey: `${doc._id}:${e.type}` },
            endpoint,
          );
    },
  };
}
