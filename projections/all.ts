/**
 * Every projection Sergo keeps, in the order the projector applies them.
 *
 * @module
 */
import { catalogue } from "./catalogue.ts";
import { keyScopes } from "./key_scopes.ts";
import type { Projection } from "./projection.ts";

/** Every projection. */
export const ALL_PROJECTIONS: readonly Projection[] = [catalogue, keyScopes];
