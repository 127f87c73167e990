/** Option checks shared by the circuit, the policy and the registry. */

/** Throws RangeError("[policies] message") unless `condition` holds: a wiring error at boot. */
export function checkOption(condition: boolean, message: string): asserts condition {
  if (!condition) throw new RangeError(`[policies] ${message}`);
}

/** Drops keys whose value is undefined, so spreading options never erases a default. */
export function definedOptions<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
