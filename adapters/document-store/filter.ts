/**
 * The document store's query helpers, re-exported from their modules under ./query/ for existing
 * importers: values (paths, MongoDB's value order), filter (validation and matching), sort, cursor
 * (paging), update (validation, application, upserts), keys (unique indexes), ids, lease and copy.
 * Both stores run their inputs through the same helpers, so they accept and reject the same inputs.
 */
export { InvalidQueryError, isInvalidQueryError } from "../ports.ts";
export { compareValues, compilePath, getPath, isOperatorObject } from "./query/values.ts";
export { compileFilter, matchesFilter, matchesScalarEquality, validateFilter } from "./query/filter.ts";
export { compareSortValues, compileSort, normalizeSort, sortValues, type CompiledSort } from "./query/sort.ts";
export { decodeCursor, encodeCursor, pageLimit, pageSkip } from "./query/cursor.ts";
export { applyUpdate, equalityFields, upsertDocument, validateUpdate } from "./query/update.ts";
export { indexName, uniqueKey, uniqueKeyOf, validateIndexFields } from "./query/keys.ts";
export { assertDocument, newId } from "./query/ids.ts";
export { validateLease } from "./query/lease.ts";
export { cloneJson } from "./query/copy.ts";
