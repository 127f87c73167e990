/**
 * The fixed parts of the OpenAPI document: the security schemes of the three credentials and the
 * two error bodies every route can answer (the gateway's problem+json, spec §2.4, and the
 * collections envelope). Built afresh for each document, so no two documents share an object.
 */

export function securitySchemes(): Record<string, unknown> {
  return {
    apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
    adminKey: { type: "apiKey", in: "header", name: "x-admin-api-key" },
    bearer: { type: "http", scheme: "bearer" },
  };
}

export function errorSchemas(): Record<string, unknown> {
  return {
    Problem: {
      type: "object",
      required: ["type", "title", "status", "statusCode", "detail", "message", "instance", "code", "requestId", "timestamp", "action", "retry", "path"],
      properties: {
        type: { type: "string", format: "uri" },
        title: { type: "string" },
        status: { type: "integer" },
        statusCode: { type: "integer" },
        detail: { type: "string" },
        message: { type: "string" },
        instance: { type: "string" },
        code: { type: "string", pattern: "^GW_[A-Z_]+$" },
        requestId: { type: "string" },
        timestamp: { type: "string", format: "date-time" },
        action: { type: "object" },
        retry: { type: "object" },
        errors: { type: "array", maxItems: 20 },
        operationId: { type: "string" },
        path: { type: "string" },
      },
    },
    CollectionsError: {
      type: "object",
      properties: {
        requestId: { type: "string" },
        requestTimestamp: { type: "string" },
        message: { type: "string" },
        statusCode: { type: "integer" },
        errors: { type: "array", items: { type: "object", properties: { field: { type: "string" }, message: { type: "string" } } } },
      },
    },
  };
}
