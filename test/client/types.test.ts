/**
 * The client's own declarations of answers that have no view type on the server (a page of
 * represented businesses, the identity history) stay equal to what the onboarding service answers:
 * each is assignable to the other (checked by `tsc --noEmit`, which `npm test` runs first). A field
 * added, removed or retyped on either side fails the type check here.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { IdentityVersions, SubBusinessPage } from "../../client/types.ts";
import type { OnboardingService } from "../../plugins/onboarding/service.ts";

type ServerIdentityVersions = Awaited<ReturnType<OnboardingService["identityVersions"]>>;
type ServerSubBusinessPage = Awaited<ReturnType<OnboardingService["list"]>>;

/** Compiles only when A and B are assignable to each other. */
function sameShape<A, B>(toB: (a: A) => B, toA: (b: B) => A): [(a: A) => B, (b: B) => A] {
  return [toB, toA];
}

test("the client's IdentityVersions and SubBusinessPage are the onboarding service's answers", () => {
  const checks = [
    sameShape<ServerIdentityVersions, IdentityVersions>((a) => a, (b) => b),
    sameShape<ServerSubBusinessPage, SubBusinessPage>((a) => a, (b) => b),
  ];
  assert.is(checks.length, 2);
});

test.run();
