/**
 * CLI of the regulator simulator:
 *
 *   npx tsx adapters/regulator/simulator/main.ts --port 3100 --fixtures config/regulator-fixtures.json
 *
 * Options: --port (env REGULATOR_SIM_PORT, default 3100; 0 = a free port), --host (env
 * REGULATOR_SIM_HOST, default 127.0.0.1), --fixtures (env REGULATOR_SIM_FIXTURES, default
 * config/regulator-fixtures.json), --no-control-api. Credentials: env REGULATOR_API_KEY /
 * REGULATOR_API_SECRET (defaults "sim_api_key_demo" / "sim_api_secret_demo").
 * Prints its URL on one line on stdout; stops on SIGINT / SIGTERM.
 */
import { parseArgs } from "node:util";
import { isSimulatorFixturesError, loadFixtures } from "./fixtures.ts";
import { startRegulatorSimulator } from "./server.ts";

const DEFAULT_PORT = 3100;
const DEFAULT_FIXTURES = "config/regulator-fixtures.json";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: "string" },
      host: { type: "string" },
      fixtures: { type: "string" },
      "no-control-api": { type: "boolean" },
    },
    strict: true,
  });
  const env = process.env;
  const portText = values.port ?? env.REGULATOR_SIM_PORT ?? String(DEFAULT_PORT);
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(`invalid port "${portText}" (expected an integer 0..65535)`);
  }
  const fixtures = loadFixtures(values.fixtures ?? env.REGULATOR_SIM_FIXTURES ?? DEFAULT_FIXTURES);
  const sim = await startRegulatorSimulator({
    port,
    host: values.host ?? env.REGULATOR_SIM_HOST ?? "127.0.0.1",
    fixtures,
    credentials: {
      apiKey: env.REGULATOR_API_KEY ?? "sim_api_key_demo",
      apiSecret: env.REGULATOR_API_SECRET ?? "sim_api_secret_demo",
    },
    controlApi: values["no-control-api"] !== true,
  });
  process.stdout.write(`${sim.url}\n`);

  const stop = () => {
    void sim.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

main().catch((e: unknown) => {
  const message = isSimulatorFixturesError(e) ? e.message : `regulator simulator failed to start: ${(e as Error).message ?? String(e)}`;
  process.stderr.write(`${message}\n`);
  process.exit(1);
});
