/**
 * What the collections API answers when a dependency does not (the store is down, or slower than
 * its deadline): a 503 in the collections envelope with Retry-After, never an unexplained 500. The
 * request may have been partly applied before the failure: what it recorded is finished by the
 * workers, exactly once. The checkout pages answer their own HTML 503 with the same Retry-After
 * (payment-links/page-routes.ts) before this wrapper sees the failure.
 */
import { isDependencyUnavailableError } from "../../../adapters/ports.ts";
import { CollectionsError } from "../../../core/errors/gateway-error.ts";
import { describeError, type Logger } from "../../../core/log.ts";
import type { RouteDeclaration } from "../../../core/plugin.ts";

/** Retry-After (seconds) of the 503 answers when a dependency does not answer (API and checkout pages). */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 30;

/**
 * The route with its handler's dependency outages answered as the envelope's 503 (logged as
 * `collections_dependency_unavailable`); every other failure passes through unchanged.
 */
export function answerOutageAs503(log: Logger, route: RouteDeclaration): RouteDeclaration {
  const { handler } = route;
  return {
    ...route,
    async handler(ctx) {
      try {
        return await handler(ctx);
      } catch (e) {
        if (!isDependencyUnavailableError(e)) throw e;
        log.warn("collections_dependency_unavailable", { requestId: ctx.requestId, route: ctx.route?.id ?? null, error: describeError(e) });
        throw new CollectionsError(
          503,
          "The service is temporarily unavailable: the request may not have completed. Check its result before sending it again.",
          [],
          UNAVAILABLE_RETRY_AFTER_SECONDS,
        );
      }
    },
  };
}
