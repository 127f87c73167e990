/**
 * The plugins' boot: their declarations checked (names, ports, stages), each set up once in an
 * order that puts a plugin after the plugins whose offers it uses, and their routes and workers
 * gathered in registration order. Problems are collected, never thrown one by one, so a bad
 * deployment learns everything wrong with it at once.
 */
import { PORT_NAMES, type GatewayPlugin, type OfferKey, type Offers, type PluginKit, type PluginSetup, type Ports, type RouteDeclaration, type Worker } from "./plugin.ts";
import { isStageName, type StageName } from "./stages/names.ts";

export interface SetUpPlugins {
  entries: Array<{ plugin: GatewayPlugin; routes: RouteDeclaration[] }>;
  workers: Worker[];
}

/** Sets every plugin up on `kit` (whose `offers` it fills); adds what is wrong to `problems`. */
export function setUpPlugins(plugins: readonly GatewayPlugin[], kit: PluginKit, disabled: readonly StageName[], problems: string[]): SetUpPlugins {
  problems.push(...declarationProblems(plugins, kit.ports, disabled));
  const offered = new Map<string, unknown>();
  kit.offers = _offersOf(offered);
  const setups = new Map<GatewayPlugin, PluginSetup>();
  for (const plugin of _setupOrder(plugins, problems)) {
    try {
      const setup = plugin.setup(kit);
      setups.set(plugin, setup);
      for (const o of setup.offers ?? []) {
        if (!(plugin.provides ?? []).some((k) => k.name === o.key.name)) problems.push(`plugin "${plugin.name}" offers "${o.key.name}" without declaring it in "provides"`);
        else offered.set(o.key.name, o.value);
      }
    } catch (e) {
      problems.push(`plugin "${plugin.name}" failed to set up: ${(e as Error).message}`);
    }
  }
  const entries: SetUpPlugins["entries"] = [];
  const workers: Worker[] = [];
  for (const plugin of plugins) {
    const setup = setups.get(plugin);
    if (!setup) continue;
    entries.push({ plugin, routes: setup.routes });
    workers.push(...(setup.workers ?? []));
  }
  return { entries, workers };
}

/** Offers of a kit before any plugin is set up (a plugin reading one outside setup is a bug). */
export const NO_OFFERS: Offers = _offersOf(new Map());

/** Duplicate names, unknown or missing ports, unknown or disabled stages. */
export function declarationProblems(plugins: readonly GatewayPlugin[], ports: Ports, disabled: readonly StageName[]): string[] {
  const problems: string[] = [];
  const names = new Set<string>();
  const providers = new Map<string, string>();
  for (const plugin of plugins) {
    if (names.has(plugin.name)) problems.push(`plugin "${plugin.name}" is registered twice`);
    names.add(plugin.name);
    for (const key of plugin.provides ?? []) {
      const other = providers.get(key.name);
      if (other !== undefined) problems.push(`plugin "${plugin.name}" provides "${key.name}", which plugin "${other}" provides already`);
      providers.set(key.name, plugin.name);
    }
    for (const need of plugin.needs ?? []) {
      if (!(PORT_NAMES as readonly string[]).includes(need)) problems.push(`plugin "${plugin.name}" needs unknown port "${need}"`);
      else if (!ports[need]) problems.push(`plugin "${plugin.name}" needs port "${need}", which is not configured`);
    }
    for (const stage of plugin.stages ?? []) {
      if (!isStageName(stage)) problems.push(`plugin "${plugin.name}" needs unknown stage "${stage}"`);
      else if (disabled.includes(stage)) problems.push(`plugin "${plugin.name}" needs stage "${stage}", which config disables`);
    }
  }
  return problems;
}

// --- Internal helpers ---

function _offersOf(offered: ReadonlyMap<string, unknown>): Offers {
  return {
    get<T>(key: OfferKey<T>): T {
      if (!offered.has(key.name)) throw new Error(`offer "${key.name}" is not available here: declare it in the plugin's "uses"`);
      return offered.get(key.name) as T;
    },
  };
}

/**
 * Registration order, except that a plugin comes after the plugins offering what it `uses`. An
 * offer nobody makes, or plugins that use each other's offers, are problems (those plugins are
 * left out).
 */
function _setupOrder(plugins: readonly GatewayPlugin[], problems: string[]): GatewayPlugin[] {
  const offeredBy = new Map<string, GatewayPlugin>();
  for (const p of plugins) for (const key of p.provides ?? []) offeredBy.set(key.name, p);
  const ordered: GatewayPlugin[] = [];
  const placed = new Set<GatewayPlugin>();
  let pending = [...plugins];
  while (pending.length > 0) {
    const ready = pending.filter((p) => (p.uses ?? []).every((key) => { const by = offeredBy.get(key.name); return by !== undefined && (by === p || placed.has(by)); }));
    if (ready.length === 0) break;
    for (const p of ready) {
      ordered.push(p);
      placed.add(p);
    }
    pending = pending.filter((p) => !placed.has(p));
  }
  for (const p of pending) {
    const missing = (p.uses ?? []).filter((key) => !offeredBy.has(key.name)).map((key) => key.name);
    problems.push(
      missing.length > 0
        ? `plugin "${p.name}" uses ${missing.map((m) => `"${m}"`).join(", ")}, which no plugin offers`
        : `plugin "${p.name}" uses offers of plugins that wait for it (a cycle)`,
    );
  }
  return ordered;
}
