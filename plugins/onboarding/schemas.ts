/**
 * valibot schemas of the onboarding routes. Messages are fixed texts: a violation never repeats the
 * rejected value (least of all a password).
 */
import * as v from "valibot";
import { LIST_CURSOR, LIST_LIMIT } from "../../core/paging.ts";

const MAX_EMAIL = 320;
const MAX_PASSWORD = 1024;
const MAX_TIN = 64;
/** Each of publicKey and certificate (the body limit is 64 KiB). */
const MAX_CRYPTO_FIELD = 16 * 1024;

/**
 * Transient taxpayer portal credentials. Both fields are optional in the schema so that a missing
 * or empty one is answered GW_REG_CREDENTIALS_REQUIRED (spec §7.6), not a generic validation error.
 */
export const RegulatorCredentials = v.strictObject({
  email: v.optional(v.pipe(v.string("must be a string"), v.maxLength(MAX_EMAIL, `at most ${MAX_EMAIL} characters`))),
  password: v.optional(v.pipe(v.string("must be a string"), v.maxLength(MAX_PASSWORD, `at most ${MAX_PASSWORD} characters`))),
});

const nonEmpty = (max: number) =>
  v.pipe(v.string("must be a string"), v.minLength(1, `1 to ${max} characters`), v.maxLength(max, `1 to ${max} characters`));

/**
 * Base64 text (the regulator's QR material is base64: standard or URL-safe alphabet, padding
 * optional, line breaks as in wrapped base64 ignored), so a placeholder or a raw PEM is refused at
 * input with the field named, not stored and used for QR codes later.
 */
const BASE64 = /^(?:[A-Za-z0-9+/_-]{4})*(?:[A-Za-z0-9+/_-]{2}(?:==)?|[A-Za-z0-9+/_-]{3}=?)?$/;

const base64Text = (max: number) =>
  v.pipe(
    nonEmpty(max),
    v.rawCheck(({ dataset, addIssue }) => {
      if (dataset.typed && !BASE64.test(dataset.value.replace(/\r?\n/g, ""))) addIssue({ message: "must be base64" });
    }),
  );

export const CryptoMaterialBody = v.strictObject({
  publicKey: base64Text(MAX_CRYPTO_FIELD),
  certificate: base64Text(MAX_CRYPTO_FIELD),
});

/** POST /sub-businesses */
export const OnboardingBody = v.strictObject({
  regulatorCredentials: v.optional(RegulatorCredentials),
  tin: v.optional(nonEmpty(MAX_TIN)),
  cryptoMaterial: v.optional(CryptoMaterialBody),
});
export type OnboardingInput = v.InferOutput<typeof OnboardingBody>;

/** POST /sub-businesses/:id/identity-reverification */
export const ReverificationBody = v.strictObject({
  regulatorCredentials: v.optional(RegulatorCredentials),
});
export type ReverificationInput = v.InferOutput<typeof ReverificationBody>;

/**
 * POST /sub-businesses/:id/reg-crypto-material. `expectedCryptoVersion` is the rotation proof: the
 * cryptoVersion the caller read; when it is no longer current the rotation is refused
 * (GW_IDEMPOTENCY_CONTENT_CONFLICT, spec §7.2 exception 2 "stale rotation proof").
 */
export const RotationBody = v.strictObject({
  publicKey: base64Text(MAX_CRYPTO_FIELD),
  certificate: base64Text(MAX_CRYPTO_FIELD),
  expectedCryptoVersion: v.optional(
    v.pipe(
      v.number("must be a number"),
      v.integer("must be an integer"),
      v.minValue(0, "must be 0 or more"),
      v.maxValue(1_000_000_000, "too large"),
    ),
  ),
});
export type RotationInput = v.InferOutput<typeof RotationBody>;

/** POST /admin/sub-businesses/:id/identity-reviews/:reviewId/decision */
export const DecisionBody = v.strictObject({
  decision: v.picklist(["approve", "reject"], 'must be "approve" or "reject"'),
});
export type DecisionInput = v.InferOutput<typeof DecisionBody>;

/** POST /admin/sub-businesses/:id/identity-migrations */
export const MigrationBody = v.strictObject({
  reviewId: v.pipe(v.string("must be a string"), v.uuid("must be a UUID")),
});
export type MigrationInput = v.InferOutput<typeof MigrationBody>;

/** gatewaySubBusinessId in a path: 1 to 255 visible ASCII characters (spec §2.1, §8). */
export const SubBusinessIdParam = v.pipe(
  v.string("must be a string"),
  v.minLength(1, "1 to 255 characters"),
  v.maxLength(255, "1 to 255 characters"),
  v.regex(/^[\x21-\x7e]+$/, "visible ASCII characters only"),
);

export const SubBusinessParams = v.object({ gatewaySubBusinessId: SubBusinessIdParam });

export const ReviewParams = v.object({
  gatewaySubBusinessId: SubBusinessIdParam,
  reviewId: v.pipe(v.string("must be a string"), v.uuid("must be a UUID")),
});

/** GET /sub-businesses?limit=&cursor= */
export const ListQuery = v.object({ limit: LIST_LIMIT, cursor: LIST_CURSOR });
export type ListInput = v.InferOutput<typeof ListQuery>;

export const DEFAULT_LIST_LIMIT = 20;

/** GET /admin/identity-reviews?status=&businessId=&limit=&cursor= (operator) */
export const ReviewListQuery = v.object({
  status: v.optional(v.picklist(["pending", "approved", "rejected", "migrated"], 'one of "pending", "approved", "rejected", "migrated"'), "pending"),
  businessId: v.optional(v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "a business id"))),
  limit: LIST_LIMIT,
  cursor: LIST_CURSOR,
});
export type ReviewListInput = v.InferOutput<typeof ReviewListQuery>;
