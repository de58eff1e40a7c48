/**
 * Every projection Sergo keeps, in the order the projector applies them.
 *
 * @module
 */
import { auditView } from "./audit_view.ts";
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
