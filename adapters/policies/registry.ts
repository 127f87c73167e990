/** The registry of every dependency's policy: names them once, and feeds /health/dependencies. */
import { definedOptions } from "./options.ts";
import { createDependencyPolicy } from "./policy.ts";
import type { DependencyPolicy, DependencyPolicyOptions, PolicyRegistry, PolicyRegistryDefaults } from "./types.ts";

export function createPolicyRegistry(defaults: PolicyRegistryDefaults = {}): PolicyRegistry {
  const policies = new Map<string, DependencyPolicy>();

  function register(policy: DependencyPolicy): DependencyPolicy {
    const existing = policies.get(policy.dependency);
    if (existing && existing !== policy) {
      throw new Error(`[policies] a policy for "${policy.dependency}" is already registered`);
    }
    policies.set(policy.dependency, policy);
    return policy;
  }

  return {
    create: (options) =>
      register(createDependencyPolicy({ ...definedOptions(defaults), ...definedOptions(options) } as DependencyPolicyOptions)),
    register,
    get: (dependency) => policies.get(dependency),
    names: () => [...policies.keys()].sort(),
    snapshot: () => [...policies.keys()].sort().map((name) => policies.get(name)!.snapshot()),
  };
}
