/**
 * Every planted bug `deno task mutate` knows: the first list and the lists
 * each area keeps in its own file (`mutations_<area>.ts`), so that adding
 * entries for one area does not touch another's.
 *
 * @module
 */
import { type Mutation, MUTATIONS } from "./mutations.ts";
import { MUTATIONS_CHATGPT } from "./mutations_chatgpt.ts";
import { MUTATIONS_CONSOLE } from "./mutations_console.ts";
import { MUTATIONS_EDGE } from "./mutations_edge.ts";
import { MUTATIONS_PERF } from "./mutations_perf.ts";
import { MUTATIONS_REPLICA } from "./mutations_replica.ts";
import { MUTATIONS_SEARCH } from "./mutations_search.ts";
import { MUTATIONS_STANDARD } from "./mutations_standard.ts";

/** All of them, in a stable order. */
export const ALL_MUTATIONS: Mutation[] = [
  ...MUTATIONS,
  ...MUTATIONS_CHATGPT,
  ...MUTATIONS_CONSOLE,
  ...MUTATIONS_EDGE,
  ...MUTATIONS_PERF,
  ...MUTATIONS_REPLICA,
  ...MUTATIONS_SEARCH,
  ...MUTATIONS_STANDARD,
];
