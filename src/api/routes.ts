/**
 * The REST API's route table: method + path pattern → handler, one file per
 * kind of thing. The order is the API page's.
 *
 * @module
 */
import { ME_ROUTE, SIGN_OUT_ROUTE } from "./account.ts";
import { DOCUMENT_ROUTES } from "./documents.ts";
import { FOLDER_ROUTES } from "./folders.ts";
import { KEY_ROUTES } from "./keys.ts";
import type { Route } from "./route.ts";
import { SEARCH_ROUTE } from "./search.ts";

/** Every REST route under `/api/` but the audit's (which `services.audit` answers). */
export const ROUTES: readonly Route[] = [
  ME_ROUTE,
  ...FOLDER_ROUTES,
  ...DOCUMENT_ROUTES,
  SEARCH_ROUTE,
  ...KEY_ROUTES,
  SIGN_OUT_ROUTE,
];
