/**
 * Every planted bug `deno task mutate` knows: the first list and the lists
 * each area keeps in its own file (`mutations_<area>.ts`), so that adding
 * entries for one area does not touch another's. `--file NAME` picks lists
 * by their file's name.
 *
 * @module
 */
import { type Mutation, MUTATIONS } from "./mutations.ts";
import { MUTATIONS_API } from "./mutations_api.ts";
import { MUTATIONS_CHATGPT } from "./mutations_chatgpt.ts";
import { MUTATIONS_CONSOLE } from "./mutations_console.ts";
import { MUTATIONS_DOMAIN } from "./mutations_domain.ts";
import { MUTATIONS_EDGE } from "./mutations_edge.ts";
import { MUTATIONS_MUTANTS } from "./mutations_mutants.ts";
import { MUTATIONS_OAUTH } from "./mutations_oauth.ts";
import { MUTATIONS_PERF } from "./mutations_perf.ts";
import { MUTATIONS_REPLICA } from "./mutations_replica.ts";
import { MUTATIONS_SEARCH } from "./mutations_search.ts";
import { MUTATIONS_STANDARD } from "./mutations_standard.ts";

/** Every list, by the name of its file (without `.ts`). */
export const LISTS: Readonly<Record<string, Mutation[]>> = {
  mutations: MUTATIONS,
  mutations_api: MUTATIONS_API,
  mutations_chatgpt: MUTATIONS_CHATGPT,
  mutations_console: MUTATIONS_CONSOLE,
  mutations_domain: MUTATIONS_DOMAIN,
  mutations_edge: MUTATIONS_EDGE,
  mutations_mutants: MUTATIONS_MUTANTS,
  mutations_oauth: MUTATIONS_OAUTH,
  mutations_perf: MUTATIONS_PERF,
  mutations_replica: MUTATIONS_REPLICA,
  mutations_search: MUTATIONS_SEARCH,
  mutations_standard: MUTATIONS_STANDARD,
};

/** All of them, in a stable order. */
export const ALL_MUTATIONS: Mutation[] = Object.values(LISTS).flat();
