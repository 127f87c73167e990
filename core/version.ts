/** The gateway's version (OpenAPI info.version, health snapshot). */
export const VERSION = "0.1.0";
