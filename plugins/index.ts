/** Every plugin the gateway runs, in registration order. A new plugin is one import and one entry. */
import type { GatewayPlugin } from "../core/plugin.ts";
import { admin } from "./admin/plugin.ts";
import { collections } from "./collections/plugin.ts";
import { operatorConsole } from "./console/plugin.ts";
import { dashboard } from "./dashboard/plugin.ts";
import { health } from "./health/plugin.ts";
import { onboarding } from "./onboarding/plugin.ts";
import { recovery } from "./recovery/plugin.ts";
import { signing } from "./signing/plugin.ts";
import { storedProcessing } from "./stored-processing/plugin.ts";
import { transmission } from "./transmission/plugin.ts";

export const plugins: readonly GatewayPlugin[] = [health, onboarding, signing, storedProcessing, transmission, admin, recovery, collections, operatorConsole, dashboard];
