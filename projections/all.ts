/**
 * Every projection Sergo keeps, in the order the projector applies them.
 *
 * @module
 */
import type { EventStore } from "../events/store.ts";
import { auditView, auditViewWithoutCalls } from "./audit_view.ts";
import { catalogue } from "./catalogue.ts";
import { keyScopes } from "./key_scopes.ts";
import { oauthGrants } from "./oauth_grants.ts";
import type { Projection } from "./projection.ts";
import { searchIndexProjection } from "./search_index.ts";
import { searchVectorsProjection } from "./search_vectors.ts";

/** Every projection. */
export const ALL_PROJECTIONS: readonly Projection[] = [
  catalogue,
  keyScopes,
  oauthGrants,
  searchIndexProjection,
  searchVectorsProjection,
  auditView,
];

/** Every projection on the shared log in PostgreSQL: the audit view reads MCP calls from its database. */
export const SHARED_LOG_PROJECTIONS: readonly Projection[] = ALL_PROJECTIONS.map((projection) =>
  projection === auditView ? auditViewWithoutCalls : projection
);

/** The projections kept on `store`'s log: the shared log's when it indexes its MCP calls (`auditCalls`). */
export function projectionsFor(store: EventStore): readonly Projection[] {
  return "auditCalls" in store ? SHARED_LOG_PROJECTIONS : ALL_PROJECTIONS;
}
