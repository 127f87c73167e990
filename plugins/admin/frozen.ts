/**
 * Frozen operations for operators: the listing lives in the invoice kit
 * (plugins/invoice/frozen-operations.ts) so the Admin API route and the operator console read the
 * same service; this module keeps the admin plugin's import path.
 */
export {
  decodeFrozenCursor,
  encodeFrozenCursor,
  frozenSources,
  listFrozen,
  passthroughSignSource,
  passthroughTransmitSource,
  storedInvoiceSource,
  type FrozenOperation,
  type FrozenQuery,
  type FrozenSource,
} from "../invoice/frozen-operations.ts";
