/**
 * The query parameters of every cursor-paged list (DECISIONS.md "Lists": `{ data, nextCursor }`,
 * `limit` ≤ 100): `limit` as an integer 1–100, `cursor` as the opaque value of a previous `nextCursor`.
 */
import * as v from "valibot";

export const LIST_LIMIT = v.optional(
  v.pipe(
    v.string(),
    v.regex(/^[0-9]{1,4}$/, "an integer from 1 to 100"),
    v.transform(Number),
    v.minValue(1, "an integer from 1 to 100"),
    v.maxValue(100, "an integer from 1 to 100"),
  ),
);

export const LIST_CURSOR = v.optional(
  v.pipe(
    v.string(),
    v.minLength(1, "1 to 512 characters"),
    v.maxLength(512, "1 to 512 characters"),
    v.regex(/^[A-Za-z0-9_-]+$/, "an opaque cursor from nextCursor"),
  ),
);
