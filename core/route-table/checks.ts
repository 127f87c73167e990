/**
 * What the route table refuses at boot in a plugin's route declarations: rules of one declaration
 * (path, skips, auth per service, modes). Each problem is a line of the BootError; the rules for
 * declaring one method + path more than once (mode variants) are core/route-table.ts's.
 */
import type { RouteDeclaration } from "../plugin.ts";
import { MANDATORY_STAGES, isStageName } from "../stages/names.ts";

/** The problems of one declaration, each prefixed with `where` ("plugin "x" route GET /y"). */
export function declarationProblems(decl: RouteDeclaration, where: string): string[] {
  const problems: string[] = [];
  if (!decl.path.startsWith("/")) problems.push(`${where}: path must start with "/"`);
  for (const s of decl.skip ?? []) {
    if (!isStageName(s)) problems.push(`${where}: skips unknown stage "${s}"`);
    else if (MANDATORY_STAGES.includes(s)) problems.push(`${where}: stage "${s}" cannot be skipped`);
  }
  if (decl.auth === "none" && decl.idempotent) problems.push(`${where}: an idempotent mutation needs authentication`);
  if (decl.modes && decl.service !== "gateway") problems.push(`${where}: modes apply to gateway routes only`);
  if (decl.modes && decl.hosts === "any") problems.push(`${where}: modes apply to routes on approved domains (hosts "service") only`);
  if (decl.modes && decl.modes.length === 0) problems.push(`${where}: modes must name at least one mode`);
  if (decl.auth === "bearer" && decl.service !== "collections") problems.push(`${where}: Bearer auth is for collections routes`);
  if (decl.auth === "apiKey" && decl.service !== "gateway") problems.push(`${where}: x-api-key auth is for gateway routes`);
  if (decl.auth === "apiKey" && decl.hosts === "any") problems.push(`${where}: x-api-key routes answer on approved domains only`);
  return problems;
}
