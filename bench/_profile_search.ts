// Lists the slowest benchmark queries with their terms' document frequencies (a tuning aid).
import { DatabaseSync } from "node:sqlite";
import { searchPassages } from "../projections/search_index.ts";
import { queryTerms } from "../projections/_search_terms.ts";
import { loadCorpus } from "./_corpus_text.ts";
import { benchQueries } from "./search.ts";

const size = Number(Deno.args[0] ?? 100000);
const db = new DatabaseSync(new URL(`./data/sergo-${size}.db`, import.meta.url).pathname);
const queries = benchQueries(await loadCorpus());
const timed: Array<{ query: string; ms: number }> = [];
for (const query of queries) {
  const started = performance.now();
  searchPassages(db, { personId: "bench-person", folderIds: null, documentIds: [], query, depth: 50 });
  timed.push({ query, ms: performance.now() - started });
}
timed.sort((a, b) => b.ms - a.ms);
const count = db.prepare("SELECT count(*) AS n FROM (SELECT rowid FROM search_fts WHERE search_fts MATCH ? LIMIT 1000000)");
for (const { query, ms } of timed.slice(0, 12)) {
  const dfs = queryTerms(query).map((term) => `${term}:${(count.get(`{body section notes} : "${term}"`) as { n: number }).n}`);
  console.log(ms.toFixed(1), JSON.stringify(query), dfs.join(" "));
}
