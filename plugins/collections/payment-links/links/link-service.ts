/**
 * Payment links: creation (unique source_reference per business, generated reference), the
 * business-scoped lookups and lists, toggle-status, the public lookup the checkout page uses, the
 * availability rules and the e-mail sent to `customer_emails`. Every API lookup carries the Bearer
 * key's business in its filter: another business's link is simply not found.
 */
import { randomUUID } from "node:crypto";
import { isDuplicateKeyError, type Collection, type DocumentStore, type EmailSender, type Filter } from "../../../../adapters/ports.ts";
import { CollectionsError } from "../../../../core/errors/gateway-error.ts";
import type { TenantDirectory } from "../../../../core/directory.ts";
import type { Logger } from "../../../../core/log.ts";
import { findPage, newReference } from "../../shared/common.ts";
import { ngnToKobo } from "../../shared/money.ts";
import { parseWindowEdge } from "../../shared/time.ts";
import { availability, openPaymentLinks, paymentLinkView, type Availability, type PaymentLink, type PaymentLinkView } from "./link.ts";
import { sendLinkEmails } from "./link-emails.ts";
import type { CreatePaymentLinkInput, ListLinksInput } from "./schemas.ts";

const REFERENCE_ATTEMPTS = 5;

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
  const links = openPaymentLinks(options.store);
  const linkUrl = (link: PaymentLink) => `${options.publicBaseUrl}/pay/${encodeURIComponent(link.reference)}`;
  return {
    async create(businessId, input) {
      const now = options.clock();
      _refuseEnded(input, now);
      const link = await _insertLink(links, () => _newLink(businessId, input, now));
      sendLinkEmails(options, link, linkUrl(link));
      return link;
    },
    findByReference: (businessId, reference) => _found(links.findOne({ businessId, reference })),
    findBySourceReference: (businessId, sourceReference) => _found(links.findOne({ businessId, sourceReference })),
    list: (businessId, query) => findPage(links, _listFilter(businessId, query), { field: "createdAt", direction: -1 }, query.page, query.limit),
    toggle: (businessId, linkId, activate) =>
      _found(
        links.findOneAndUpdate(
          { businessId, $or: [{ reference: linkId }, { _id: linkId }] },
          { $set: { status: activate ? "active" : "inactive", updatedAt: options.clock() } },
        ),
      ),
    findPublic: (reference) => links.findOne({ reference }),
    get: (id) => links.get(id),
    availability: (link, now = options.clock()) => availability(link, now),
    linkUrl,
    view: (link) => paymentLinkView(link, linkUrl(link)),
  };
}

// --- Internal helpers ---

/**
 * A link whose end_date has passed could never be paid, and its e-mails would invite customers to a
 * closed page: it is refused (422 naming end_date), not created (docs/decisions.md).
 */
function _refuseEnded(input: CreatePaymentLinkInput, now: number): void {
  const endAt = input.end_date ? parseWindowEdge(input.end_date, "end") : null;
  if (endAt !== null && endAt < now)
    throw new CollectionsError(422, "The payment link would already be closed: end_date is in the past.", [
      { field: "end_date", message: "must not be in the past" },
    ]);
}

/** A new link under a fresh id and reference. */
function _newLink(businessId: string, input: CreatePaymentLinkInput, now: number): PaymentLink {
  return {
    _id: randomUUID(),
    reference: newReference("PL-"),
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
    status: "active",
    createdAt: now,
    updatedAt: now,
  };
}

/** Inserts a new link (another reference drawn on a clash); 409 on a reused source_reference. */
async function _insertLink(links: Collection<PaymentLink>, draw: () => PaymentLink): Promise<PaymentLink> {
  for (let attempt = 1; ; attempt++) {
    const link = draw();
    try {
      await links.insert(link);
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
}

async function _found(lookup: Promise<PaymentLink | null>): Promise<PaymentLink> {
  const link = await lookup;
  if (!link) throw new CollectionsError(404, "Payment link not found.");
  return link;
}

function _listFilter(businessId: string, query: ListLinksInput): Filter {
  const filter: Filter = { businessId };
  if (query.status) filter.status = query.status;
  const search = query.search?.trim();
  if (search) filter.$or = [{ linkName: { $contains: search } }, { reference: { $contains: search } }];
  return filter;
}

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
