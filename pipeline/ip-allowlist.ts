/**
 * Stage 8, IP allowlist: a credential's ipWhitelisted (addresses or CIDR ranges) against the
 * client address the trusted edge supplied (or the socket in direct mode). X-Forwarded-For is
 * never read. An empty list permits any source; with a non-empty list a missing, malformed or
 * non-matching address is refused (403; the spec has no dedicated code, so it answers
 * GW_AUTH_TENANT_FORBIDDEN, see docs/decisions.md).
 */
import { BlockList, isIP } from "node:net";
import { gwError } from "../core/errors/gateway-error.ts";
import type { Principal } from "../core/directory.ts";
import { defineStage } from "../core/stages/define.ts";

export const ipAllowlistStage = defineStage({
  name: "ip-allowlist",
  create() {
    const lists = new WeakMap<Principal, BlockList>();
    return function ipAllowlist(ctx) {
      const p = ctx.principal;
      if (!p || p.ipWhitelisted.length === 0) return;
      let list = lists.get(p);
      if (!list) {
        list = buildAllowList(p.ipWhitelisted);
        lists.set(p, list);
      }
      const address = ctx.clientAddress;
      const family = address ? isIP(address) : 0;
      if (!address || family === 0 || !list.check(address, family === 4 ? "ipv4" : "ipv6"))
        throw gwError("GW_AUTH_TENANT_FORBIDDEN", { detail: "The client address is not allowed for this API key." });
    };
  },
});

export function buildAllowList(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address, bits] = entry.split("/");
    const family = isIP(address ?? "");
    // An entry node:net cannot read (a config file's typo) matches nothing rather than failing requests.
    if (family === 0 || (bits !== undefined && !(/^[0-9]{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)))) continue;
    const type = family === 4 ? "ipv4" : "ipv6";
    if (bits !== undefined) list.addSubnet(address!, Number(bits), type);
    else list.addAddress(address!, type);
  }
  return list;
}
