/**
 * The query helpers the SQLite store uses, re-exported from their modules under ./query/: values
 * (paths), filter (validation, and the JS matching of rows SQL cannot decide exactly), sort, cursor
 * (paging), update (validation, application, upserts), keys (index names), ids, lease and copy. The
 * MongoDB adapter imports the same modules, so both stores accept and reject the same inputs.
 */
export { InvalidQueryError, isInvalidQueryError } from "../ports.ts";
export { getPath, isOperatorObject } from "./query/values.ts";
export { compileFilter, validateFilter } from "./query/filter.ts";
export { normalizeSort } from "./query/sort.ts";
export { decodeCursor, encodeCursor, pageLimit, pageSkip } from "./query/cursor.ts";
export { applyUpdate, upsertDocument, validateUpdate } from "./query/update.ts";
export { indexName, validateIndexFields } from "./query/keys.ts";
export { assertDocument } from "./query/ids.ts";
export { validateLease } from "./query/lease.ts";
export { cloneJson } from "./query/copy.ts";
