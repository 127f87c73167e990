/**
 * The tenant directory's documents in the document store: kept at this path for its importers;
 * the module is core/directory/store.ts.
 */
export * from "./directory/store.ts";
