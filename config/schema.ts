/**
 * The one config schema (valibot). Everything the runtime reads comes from a value that passed
 * this schema and the cross-field checks in config/load.ts; nothing else reads files or env.
 */
import * as v from "valibot";
import { AttestationSchema } from "./attestation.ts";
import { consoleSchema } from "./console.ts";
import { dashboardSchema } from "./dashboard.ts";
import { RequestLogSchema } from "./request-log.ts";

const HOST = v.pipe(
  v.string(),
  v.regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, "a lower-case hostname without port"),
);
const POSITIVE_INT = v.pipe(v.number(), v.integer(), v.minValue(1));
const NON_NEGATIVE_INT = v.pipe(v.number(), v.integer(), v.minValue(0));
/**
 * The regulator contract versions this release supports (spec §9: test and live select theirs
 * independently); adapters/regulator has one contract adapter for each.
 */
export const REGULATOR_CONTRACT_VERSIONS = ["v1"] as const;
export type RegulatorContractVersion = (typeof REGULATOR_CONTRACT_VERSIONS)[number];

/** The embedded database file when `storage` names none (relative paths are taken from the working directory). */
export const DEFAULT_SQLITE_FILE = ".data/gatehouse.sqlite";
/** The database's name inside the folder of a `{ driver: "fs", dir }` storage section. */
export const SQLITE_FILE_IN_DIR = "gatehouse.sqlite";

/** NGN amounts are written as strings with two decimals ("1000000.00") and held as integer kobo. */
const NGN = v.pipe(v.string(), v.regex(/^\d{1,13}\.\d{2}$/, 'an NGN amount like "50.00"'));

export const CredentialSchema = v.strictObject({
  /** Stable, non-secret name of the credential (logs, quotas, audit). */
  id: v.pipe(v.string(), v.regex(/^[A-Za-z0-9._:-]{1,64}$/)),
  /** The key itself: allowed only on credentials marked demoOnly. */
  key: v.optional(v.pipe(v.string(), v.minLength(8))),
  /** "sha256:<64 hex>" of the key: how real deployments store keys. */
  keyHash: v.optional(v.pipe(v.string(), v.regex(/^sha256:[0-9a-f]{64}$/, 'a "sha256:<64 hex>" hash'))),
  demoOnly: v.optional(v.boolean(), false),
  /** Client addresses or CIDR ranges allowed to use this key; empty = any. */
  ipWhitelisted: v.optional(v.array(v.pipe(v.string(), v.minLength(2))), []),
  revoked: v.optional(v.boolean(), false),
});

export const DomainSchema = v.strictObject({
  host: HOST,
  mode: v.picklist(["passthrough", "stored"]),
  /** false: seeded as pending approval (not served until an operator approves it through the Admin API). */
  approved: v.optional(v.boolean(), true),
  signFee: v.optional(NGN, "50.00"),
  /** Stored mode: transmit automatically after signing. */
  autoTransmit: v.optional(v.boolean(), false),
});

/** Where a business's webhooks go (Standard Webhooks: the secret signs every delivery). */
const WebhookEndpointSchema = v.strictObject({
  url: v.pipe(v.string(), v.url()),
  /** "whsec_<base64>" signing secret (Standard Webhooks). */
  secret: v.pipe(v.string(), v.minLength(16)),
});

export const BusinessSchema = v.strictObject({
  id: v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9_-]{0,63}$/)),
  name: v.pipe(v.string(), v.minLength(1)),
  state: v.picklist(["TEST", "LIVE"]),
  /** Where notices about the business's integration go (an auto-disabled webhook endpoint). */
  contactEmail: v.optional(v.pipe(v.string(), v.email())),
  gateway: v.optional(
    v.strictObject({
      apiKeys: v.array(CredentialSchema),
      domains: v.array(DomainSchema),
      wallet: v.optional(v.strictObject({ openingBalance: NGN }), { openingBalance: "0.00" }),
      /** Invoice webhooks (invoice.accepted, invoice.signed, …): none unless configured. */
      webhook: v.optional(WebhookEndpointSchema),
    }),
  ),
  collections: v.optional(
    v.strictObject({
      apiKeys: v.array(CredentialSchema),
      webhook: v.optional(WebhookEndpointSchema),
      feeBearerDefault: v.optional(v.picklist(["MERCHANT", "CUSTOMER"]), "MERCHANT"),
    }),
  ),
});

const QuotaSchema = v.strictObject({ limit: POSITIVE_INT, windowSeconds: POSITIVE_INT });

export const ConfigSchema = v.strictObject({
  /** Free text for humans (JSON has no comments). */
  $comment: v.optional(v.string()),
  /** Marks a demo deployment; plaintext demo keys are refused unless each is marked demoOnly. */
  demo: v.optional(v.boolean(), false),
  server: v.optional(
    v.strictObject({
      host: v.optional(v.string(), "127.0.0.1"),
      port: v.optional(NON_NEGATIVE_INT, 3000),
      /** Public base URL used in links we hand out (checkout pages); default http://localhost:<port>. */
      publicBaseUrl: v.optional(v.pipe(v.string(), v.url())),
      /** How long in-flight requests may take to finish after SIGTERM/SIGINT. */
      shutdownGraceMs: v.optional(NON_NEGATIVE_INT, 10_000),
      /**
       * After SIGTERM, how long the listener stays open answering every request 503 with
       * `Connection: close` before it stops accepting: set it above the edge's upstream keep-alive
       * (4 s in deploy/nginx.conf) when the edge has no active health checks. 0: close at once.
       */
      drainDelayMs: v.optional(NON_NEGATIVE_INT, 0),
      /** Read deadline for a request body (408 GW_REQUEST_BODY_TIMEOUT after it). */
      bodyReadTimeoutMs: v.optional(POSITIVE_INT, 10_000),
      /** Read deadline for the request line and headers (408 GW_REQUEST_BODY_TIMEOUT after it). */
      headerReadTimeoutMs: v.optional(POSITIVE_INT, 10_000),
      /** Request line + headers size limit (400 GW_REQUEST_HEADER_INVALID, or 414 for a long request line). */
      maxHeaderBytes: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1024)), 16_384),
      /** Path + query length limit (414). */
      maxUriLength: v.optional(POSITIVE_INT, 8192),
    }),
    {},
  ),
  edge: v.optional(
    v.variant("mode", [
      v.strictObject({ mode: v.literal("direct") }),
      v.strictObject({
        mode: v.literal("trusted"),
        /** Header the edge sets with the shared secret. */
        secretHeader: v.optional(v.pipe(v.string(), v.toLowerCase()), "x-gatehouse-edge-secret"),
        /** "sha256:<hex>" of the shared secret (or `secret` in plain text on demo configs). */
        secretHash: v.optional(v.pipe(v.string(), v.regex(/^sha256:[0-9a-f]{64}$/))),
        secret: v.optional(v.pipe(v.string(), v.minLength(16))),
        /** Header the edge overwrites with the client address. */
        clientAddressHeader: v.optional(v.pipe(v.string(), v.toLowerCase()), "x-gatehouse-client-ip"),
      }),
    ]),
    { mode: "direct" },
  ),
  limits: v.optional(
    v.strictObject({
      bodyBytes: v.optional(POSITIVE_INT, 64 * 1024),
      largeBodyBytes: v.optional(POSITIVE_INT, 1024 * 1024),
      /** Shape of a JSON body, checked before it is parsed (400 GW_REQUEST_VALIDATION_FAILED; collections 422). */
      json: v.optional(
        v.strictObject({
          /** Nesting of objects and arrays. */
          maxDepth: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 64),
          /** Members of any one object. */
          maxObjectKeys: v.optional(POSITIVE_INT, 1000),
        }),
        {},
      ),
      capacity: v.optional(
        v.strictObject({
          total: v.optional(POSITIVE_INT, 2048),
          perDomain: v.optional(POSITIVE_INT, 512),
          retryAfterSeconds: v.optional(POSITIVE_INT, 1),
        }),
        {},
      ),
      admission: v.optional(
        v.strictObject({
          /** Requests per window per (canonical domain, client address) before authentication. */
          perClient: v.optional(POSITIVE_INT, 2000),
          windowSeconds: v.optional(POSITIVE_INT, 1),
          /** Distinct clients tracked per window; beyond it new clients share one bucket. */
          maxTrackedClients: v.optional(POSITIVE_INT, 100_000),
        }),
        {},
      ),
      quotas: v.optional(
        v.strictObject({
          sign: v.optional(QuotaSchema, { limit: 120, windowSeconds: 60 }),
          management: v.optional(QuotaSchema, { limit: 30, windowSeconds: 60 }),
          default: v.optional(QuotaSchema, { limit: 300, windowSeconds: 60 }),
        }),
        {},
      ),
      /** Stored mode: business refusals (wallet declined) an invoice may meet before it is rejected. */
      storedRetryBudget: v.optional(POSITIVE_INT, 5),
    }),
    {},
  ),
  /** Stored mode: the invoice processor and the regulator's inbound deliveries. */
  stored: v.optional(
    v.strictObject({
      processor: v.optional(
        v.strictObject({
          /** Run the processor in this process's workers (`npm start` and `npm run worker`). */
          enabled: v.optional(v.boolean(), true),
          /**
           * Invoices worked on at once per process (p-queue concurrency). 64: a pass mostly waits for
           * commits and regulator calls, and the more passes wait together, the more writes share a
           * commit (docs/decisions.md "Stored mode").
           */
          concurrency: v.optional(POSITIVE_INT, 64),
          /** Pause between looks for due work when none was found (new intakes in-process wake it at once). */
          pollMs: v.optional(POSITIVE_INT, 500),
          /** Lease on a claimed invoice; default 3 × regulator.timeoutMs + 30 000 (more than one pass can take). */
          leaseMs: v.optional(POSITIVE_INT),
          /** Dependency backoff: first delay, then doubled per consecutive outage, jittered, capped. */
          backoffBaseMs: v.optional(POSITIVE_INT, 1_000),
          backoffMaxMs: v.optional(POSITIVE_INT, 60_000),
          /** How often each processor records its heartbeat (shown in /health/dependencies). */
          heartbeatMs: v.optional(POSITIVE_INT, 5_000),
        }),
        {},
      ),
      inbound: v.optional(
        v.strictObject({
          /** Deliveries whose x-regulator-timestamp is further than this from now are refused. */
          toleranceSeconds: v.optional(POSITIVE_INT, 300),
          /** Early limit per client address on POST /regulator/inbound-invoices (before the body is read). */
          admission: v.optional(v.strictObject({ perClient: v.optional(POSITIVE_INT, 30), windowSeconds: v.optional(POSITIVE_INT, 10) }), {}),
        }),
        {},
      ),
    }),
    {},
  ),
  pipeline: v.optional(
    v.strictObject({
      /** Optional stages that may be switched off (only "admission"). */
      disable: v.optional(v.array(v.picklist(["admission"])), []),
    }),
    {},
  ),
  directory: v.optional(
    v.strictObject({
      /**
       * How long a process answers from its cached domain record before reading the store again.
       * Changes are also pushed to every process at once (coordination publish/subscribe); this
       * bounds how stale a record can be when a notification is lost. Keys are never cached.
       */
      domainCacheTtlMs: v.optional(POSITIVE_INT, 1_000),
      /** Retry-After of the 503 GW_TENANT_MODE_UNAVAILABLE answered while a domain drains for a mode change. */
      drainRetryAfterSeconds: v.optional(POSITIVE_INT, 30),
    }),
    {},
  ),
  businesses: v.array(BusinessSchema),
  operators: v.optional(v.strictObject({ apiKeys: v.array(CredentialSchema) }), { apiKeys: [] }),
  collections: v.optional(
    v.strictObject({
      /** Hosts the collections API answers on. */
      hosts: v.optional(v.array(HOST), ["localhost", "127.0.0.1"]),
      /** Fee: percent of the amount (e.g. 1.5) capped at `feeCap` NGN. */
      feePercent: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(100)), 1.5),
      feeCap: v.optional(NGN, "2000.00"),
      /** How often each worker finishes deposits and checkouts a crash left undone, and abandons stale sessions. */
      sweepIntervalMs: v.optional(POSITIVE_INT, 60_000),
    }),
    {},
  ),
  /**
   * The document store. "sqlite": the embedded default, one SQLite file (several processes on one
   * host may share it with Redis coordination). "memory": SQLite in memory (tests, benches; nothing
   * kept). "fs": the SQLite file `<dir>/gatehouse.sqlite` (the form older configs wrote; an older
   * release's files found in `dir` are imported at first start). "mongodb": several hosts.
   */
  storage: v.optional(
    v.variant("driver", [
      v.strictObject({ driver: v.literal("sqlite"), file: v.optional(v.pipe(v.string(), v.minLength(1)), DEFAULT_SQLITE_FILE) }),
      v.strictObject({ driver: v.literal("memory") }),
      v.strictObject({ driver: v.literal("fs"), dir: v.optional(v.string(), ".data") }),
      v.strictObject({
        driver: v.literal("mongodb"),
        uri: v.pipe(v.string(), v.startsWith("mongodb")),
        dbName: v.optional(v.string(), "gatehouse"),
      }),
    ]),
    { driver: "sqlite", file: DEFAULT_SQLITE_FILE },
  ),
  coordination: v.optional(
    v.variant("driver", [
      v.strictObject({ driver: v.literal("memory") }),
      v.strictObject({
        driver: v.literal("redis"),
        url: v.pipe(v.string(), v.startsWith("redis")),
        keyPrefix: v.optional(v.string(), "gh:"),
        commandTimeoutMs: v.optional(POSITIVE_INT, 500),
      }),
    ]),
    { driver: "memory" },
  ),
  webhooks: v.optional(
    v.strictObject({
      /** Per-delivery timeout. */
      timeoutMs: v.optional(POSITIVE_INT, 5_000),
      /** How often the delivery worker looks for due messages. */
      pollMs: v.optional(POSITIVE_INT, 1_000),
      /** Parallel deliveries per process. */
      concurrency: v.optional(POSITIVE_INT, 4),
      /** After a secret rotation, how long deliveries carry the old secret's signature too (default 24 h). */
      rotationOverlapMs: v.optional(NON_NEGATIVE_INT, 86_400_000),
      /** An endpoint whose attempts have all failed for this long is disabled, with a notice (default 5 days). */
      autoDisableAfterMs: v.optional(POSITIVE_INT, 432_000_000),
    }),
    {},
  ),
  email: v.optional(
    v.variant("driver", [
      /** Each message becomes an .eml file in `dir` (the embedded default; open them in any mail client). */
      v.strictObject({ driver: v.literal("folder"), dir: v.optional(v.string(), ".outbox/email"), from: v.optional(v.string()) }),
      v.strictObject({
        driver: v.literal("smtp"),
        host: v.string(),
        port: POSITIVE_INT,
        secure: v.optional(v.boolean(), false),
        user: v.optional(v.string()),
        password: v.optional(v.string()),
        from: v.string(),
      }),
    ]),
    { driver: "folder", dir: ".outbox/email" },
  ),
  dependencies: v.optional(
    v.strictObject({
      /** Per-call timeout for store and coordination calls. */
      storeTimeoutMs: v.optional(POSITIVE_INT, 2_000),
      /** How often the /health/dependencies snapshot is refreshed in the background. */
      healthRefreshMs: v.optional(POSITIVE_INT, 5_000),
    }),
    {},
  ),
  regulator: v.optional(
    v.strictObject({
      /** The deployment's own credentials to the regulator (never a taxpayer's). */
      apiKey: v.optional(v.string(), "sim_api_key_demo"),
      apiSecret: v.optional(v.string(), "sim_api_secret_demo"),
      /** Base URLs per business state; default: the built-in simulator. */
      baseUrls: v.optional(
        v.strictObject({ TEST: v.optional(v.pipe(v.string(), v.url())), LIVE: v.optional(v.pipe(v.string(), v.url())) }),
        {},
      ),
      timeoutMs: v.optional(POSITIVE_INT, 10_000),
      /**
       * The next deployment credentials, staged for a rotation: a call the regulator refuses with
       * the current ones (credentials rejected: nothing was performed) is sent again with these;
       * never after an uncertain dispatch (docs/regulator-client.md "Versions and credentials").
       */
      next: v.optional(v.strictObject({ apiKey: v.pipe(v.string(), v.minLength(1)), apiSecret: v.pipe(v.string(), v.minLength(1)) })),
      /** Regulator contract adapter version per state (spec §9); this release supports "v1". */
      contractVersions: v.optional(
        v.strictObject({ TEST: v.optional(v.string(), "v1"), LIVE: v.optional(v.string(), "v1") }),
        {},
      ),
      simulator: v.optional(
        v.strictObject({
          enabled: v.optional(v.boolean(), false),
          host: v.optional(v.string(), "127.0.0.1"),
          port: v.optional(NON_NEGATIVE_INT, 3100),
          fixtures: v.optional(v.string(), "config/regulator-fixtures.json"),
        }),
        {},
      ),
    }),
    {},
  ),
  /** Operator alerts (spec §6): the log always, a chat webhook when configured (docs/operations.md "Alerts"). */
  /** The key that signs onboarding's identity attestations (config/attestation.ts). */
  attestation: v.optional(AttestationSchema, {}),
  alerts: v.optional(
    v.strictObject({
      /** Shown in every alert; default "demo" on a demo config, else "production". */
      environment: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z][A-Za-z0-9_-]{0,31}$/, "a short name like production"))),
      /** How often the thresholds are flushed to the coordination store and evaluated. */
      flushMs: v.optional(POSITIVE_INT, 1_000),
      /** Base of the runbook links in alerts (your copy of docs/operations.md). */
      runbookBaseUrl: v.optional(v.pipe(v.string(), v.minLength(1)), "docs/operations.md"),
      /** A Slack-compatible incoming webhook (https). The URL is a secret: prefer ALERT_WEBHOOK_URL. */
      webhook: v.optional(
        v.strictObject({
          url: v.pipe(v.string(), v.url()),
          timeoutMs: v.optional(POSITIVE_INT, 3_000),
          attempts: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(10)), 5),
          backoffBaseMs: v.optional(POSITIVE_INT, 1_000),
          backoffMaxMs: v.optional(POSITIVE_INT, 30_000),
        }),
      ),
    }),
    {},
  ),
  /** Recovery jobs run by the workers (docs/operations.md "Recovery jobs"). */
  recovery: v.optional(
    v.strictObject({
      enabled: v.optional(v.boolean(), true),
      /** Pause between two runs of each job. */
      intervalMs: v.optional(POSITIVE_INT, 60_000),
      /** A frozen or held sign attempt is checked at the regulator once it is this old. */
      settleAfterMs: v.optional(POSITIVE_INT, 10 * 60_000),
      /** An in-progress sign attempt this old was abandoned by its caller (holder dead, never retried). */
      abandonedAfterMs: v.optional(POSITIVE_INT, 60 * 60_000),
      /** Anything still unresolved this long after it froze is "overdue reconciliation" (an alert). */
      overdueAfterMs: v.optional(POSITIVE_INT, 24 * 60 * 60_000),
      /** Records looked at per run and job. */
      batchSize: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(1000)), 100),
      /** The run lease (one run at a time in the deployment): renewed every third of it while a run lasts. */
      leaseMs: v.optional(v.pipe(v.number(), v.integer(), v.minValue(300)), 60_000),
    }),
    {},
  ),
  /** The operator console (config/console.ts, docs/operator-console.md). */
  console: v.optional(consoleSchema(HOST, CredentialSchema), {}),
  /** The merchant dashboard (config/dashboard.ts, docs/dashboard.md). */
  dashboard: v.optional(dashboardSchema(), {}),
  /** The request log (config/request-log.ts, docs/dashboard.md "Request log"). */
  requestLog: v.optional(RequestLogSchema, {}),
  /** Prometheus metrics (docs/operations.md "Metrics"). */
  metrics: v.optional(
    v.strictObject({
      /** GET /metrics on the gateway's own port, operator key required. */
      enabled: v.optional(v.boolean(), true),
      /** A separate listener for scrapers (no key; keep it on a private interface). null: none. */
      port: v.optional(v.nullable(NON_NEGATIVE_INT), null),
      host: v.optional(v.string(), "127.0.0.1"),
    }),
    {},
  ),
  log: v.optional(
    v.strictObject({
      level: v.optional(v.picklist(["silent", "error", "warn", "info", "debug"]), "info"),
      format: v.optional(v.picklist(["json", "pretty"]), "json"),
    }),
    {},
  ),
});

export type ConfigInput = v.InferInput<typeof ConfigSchema>;
export type Config = v.InferOutput<typeof ConfigSchema>;
export type BusinessConfig = v.InferOutput<typeof BusinessSchema>;
export type DomainConfig = v.InferOutput<typeof DomainSchema>;
export type CredentialConfig = v.InferOutput<typeof CredentialSchema>;
