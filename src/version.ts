/** Sergo's version, as `serverInfo.version` and `/healthz` show it. */
export const VERSION = "0.6.0";
