/**
 * Payment links: creation (unique source_reference per business, generated reference), the
 * business-scoped lookups and lists, toggle-status, the public lookup the checkout page uses, the
 * availability rules (status and start/end window) and the e-mail sent to `customer_emails`.
 * Every API lookup carries the Bearer key's business in its filter: another business's link is
 * simply not found.
 */
import { randomUUID } from "node:crypto";
import { isDuplicateKeyError, type Collection, type Doc, type DocumentStore, type EmailSender, type Filter } from "../../../adapters/ports.ts";
import { CollectionsError } from "../../../core/errors/gateway-error.ts";
import type { TenantDirectory } from "../../../core/directory.ts";
import { describeError, type Logger } from "../../../core/log.ts";
import { linkEmail } from "./pages/checkout-page.ts";
import { CURRENCY, koboToNgn, ngnToKobo, type FeeBearer } from "../shared/money.ts";
import type { CreatePaymentLinkInput, ListLinksInput } from "./schemas.ts";
import { findPage, newReference } from "../shared/common.ts";
import { formatTime, formatTimeOrNull, parseWindowEdge } from "../shared/time.ts";

export const LINKS_COLLECTION = "collections_payment_links";
const REFERENCE_ATTEMPTS = 5;

export interface PaymentLink extends Doc {
  businessId: string;
  /** Generated, public (it is in the checkout URL), unique across the system. */
  reference: string;
  /** The caller's identifier; unique per business. */
  sourceReference: string;
  linkName: string;
  narration: string;
  /** Fixed amount in kobo, or null when the customer chooses (minimum NGN 100). */
  amountKobo: number | null;
  feeBearer: FeeBearer;
  redirectLink: string | null;
  customerEmails: string[];
  /** Window edges in epoch ms (start: first millisecond, end: last millisecond), or null. */
  startAt: number | null;
  endAt: number | null;
  status: "active" | "inactive";
  createdAt: number;
  updatedAt: number;
}

/** A payment link as the API shows it (spec §2.3 plus DECISIONS.md's read fields). */
export interface PaymentLinkView {
  id: string;
  reference: string;
  sourceReference: string;
  linkName: string;
  linkUrl: string;
  narration: string;
  /** NGN, or null when the customer chooses the amount. */
  amount: number | null;
  currency: typeof CURRENCY;
  feeBearer: FeeBearer;
  redirectLink: string | null;
  customerEmails: string[];
  startDate: string | null;
  endDate: string | null;
  status: PaymentLink["status"];
  createdAt: string;
}

export type Availability = { ok: true } | { ok: false; reason: "inactive" | "not_started" | "ended" };

export interface PaymentLinkServiceOptions {
  store: DocumentStore;
  directory: TenantDirectory;
  log: Logger;
  /** Base of `linkUrl` (no trailing slash). */
  publicBaseUrl: string;
  email?: EmailSender;
  clock: () => number;
}

export interface PaymentLinkService {
  create(businessId: string, input: CreatePaymentLinkInput): Promise<PaymentLink>;
  findByReference(businessId: string, reference: string): Promise<PaymentLink>;
  findBySourceReference(businessId: string, sourceReference: string): Promise<PaymentLink>;
  list(businessId: string, query: ListLinksInput): Promise<{ items: PaymentLink[]; total: number }>;
  toggle(businessId: string, linkId: string, activate: boolean): Promise<PaymentLink>;
  /** The checkout page's lookup: by the public reference, any business; null when unknown. */
  findPublic(reference: string): Promise<PaymentLink | null>;
  get(id: string): Promise<PaymentLink | null>;
  availability(link: PaymentLink, now?: number): Availability;
  linkUrl(link: PaymentLink): string;
  view(link: PaymentLink): PaymentLinkView;
}

export function createPaymentLinkService(options: PaymentLinkServiceOptions): PaymentLinkService {
  const { directory, log, clock } = options;
  const links: Collection<PaymentLink> = options.store.collection<PaymentLink>(LINKS_COLLECTION, {
    indexes: [
      { fields: ["reference"], unique: true },
      { fields: ["businessId", "sourceReference"], unique: true },
      { fields: ["businessId", "createdAt"] },
    ],
  });

  const notFound = () => new CollectionsError(404, "Payment link not found.");
  const linkUrl = (link: PaymentLink) => `${options.publicBaseUrl}/pay/${encodeURIComponent(link.reference)}`;

  const sendLinkEmails = (link: PaymentLink): void => {
    if (link.customerEmails.length === 0) return;
    const sender = options.email;
    if (!sender) {
      log.warn("collections_payment_link_email_skipped", { linkReference: link.reference, reason: "no e-mail sender configured" });
      return;
    }
    const business = directory.business(link.businessId)?.name ?? "A business";
    const message = linkEmail(business, link, linkUrl(link));
    // One message per recipient (no recipient sees another's address); never awaited by create.
    void Promise.allSettled(link.customerEmails.map((to) => sender.send({ ...message, to: [to] }))).then((results) => {
      const failed = results.filter((r) => r.status === "rejected");
      if (failed.length > 0)
        log.warn("collections_payment_link_email_failed", {
          linkReference: link.reference,
          failed: failed.length,
          recipients: results.length,
          error: describeError((failed[0] as PromiseRejectedResult).reason),
        });
      else log.debug("collections_payment_link_email_sent", { linkReference: link.reference, recipients: results.length });
    });
  };

  return {
    async create(businessId, input) {
      const now = clock();
      const base = {
        businessId,
        sourceReference: input.source_reference,
        linkName: input.link_name,
        narration: input.narration,
        amountKobo: input.amount === null || input.amount === undefined ? null : ngnToKobo(input.amount),
        feeBearer: input.fee_bearer,
        redirectLink: input.redirect_link ? input.redirect_link : null,
        customerEmails: _uniqueEmails(input.customer_emails ?? []),
        startAt: input.start_date ? parseWindowEdge(input.start_date, "start") : null,
        endAt: input.end_date ? parseWindowEdge(input.end_date, "end") : null,
        status: "active" as const,
        createdAt: now,
        updatedAt: now,
      };
      for (let attempt = 1; ; attempt++) {
        const link: PaymentLink = { _id: randomUUID(), reference: newReference("PL-"), ...base };
        try {
          await links.insert(link);
          sendLinkEmails(link);
          return link;
        } catch (e) {
          if (!isDuplicateKeyError(e)) throw e;
          if (e.index.includes("sourceReference"))
            throw new CollectionsError(409, "A payment link with this source_reference already exists.", [
              { field: "source_reference", message: "is already used by another payment link of this business" },
            ]);
          // A reference collision (vanishingly rare): draw another one.
          if (attempt >= REFERENCE_ATTEMPTS) throw e;
        }
      }
    },

    async findByReference(businessId, reference) {
      const link = await links.findOne({ businessId, reference });
      if (!link) throw notFound();
      return link;
    },

    async findBySourceReference(businessId, sourceReference) {
      const link = await links.findOne({ businessId, sourceReference });
      if (!link) throw notFound();
      return link;
    },

    async list(businessId, query) {
      const filter: Filter = { businessId };
      if (query.status) filter.status = query.status;
      const search = query.search?.trim();
      if (search) filter.$or = [{ linkName: { $contains: search } }, { reference: { $contains: search } }];
      return findPage(links, filter, { field: "createdAt", direction: -1 }, query.page, query.limit);
    },

    async toggle(businessId, linkId, activate) {
      const updated = await links.findOneAndUpdate(
        { businessId, $or: [{ reference: linkId }, { _id: linkId }] },
        { $set: { status: activate ? "active" : "inactive", updatedAt: clock() } },
      );
      if (!updated) throw notFound();
      return updated;
    },

    findPublic: (reference) => links.findOne({ reference }),
    get: (id) => links.get(id),

    availability(link, now = clock()) {
      if (link.status !== "active") return { ok: false, reason: "inactive" };
      if (link.startAt !== null && now < link.startAt) return { ok: false, reason: "not_started" };
      if (link.endAt !== null && now > link.endAt) return { ok: false, reason: "ended" };
      return { ok: true };
    },

    linkUrl,

    view(link) {
      return {
        id: link._id,
        reference: link.reference,
        sourceReference: link.sourceReference,
        linkName: link.linkName,
        linkUrl: linkUrl(link),
        narration: link.narration,
        amount: link.amountKobo === null ? null : koboToNgn(link.amountKobo),
        currency: CURRENCY,
        feeBearer: link.feeBearer,
        redirectLink: link.redirectLink,
        customerEmails: link.customerEmails,
        startDate: formatTimeOrNull(link.startAt),
        endDate: formatTimeOrNull(link.endAt),
        status: link.status,
        createdAt: formatTime(link.createdAt),
      };
    },
  };
}

// --- Internal helpers ---

function _uniqueEmails(emails: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const e of emails) {
    const key = e.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(e);
  }
  return out;
}
