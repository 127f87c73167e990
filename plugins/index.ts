/** Every plugin the gateway runs, in registration order. A new plugin is one import and one entry. */
import type { GatewayPlugin } from "../core/plugin.ts";
import { collections } from "./collections/plugin.ts";
import { health } from "./health/plugin.ts";
import { onboarding } from "./onboarding/plugin.ts";

export const plugins: readonly GatewayPlugin[] = [health, onboarding, collections];
