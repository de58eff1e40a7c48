/**
 * Adopts one file into the PostgreSQL blob store and prints the peak growth
 * of the process's resident memory while it did, in MiB, as JSON. Run by
 * postgres_blob_store_test.ts in a child with a small V8 heap.
 *
 * @module
 */
import { openPostgresBlobStore } from "../../src/postgres_blob_store.ts";

const [url, tempRoot, path] = Deno.args as [string, string, string];
const blobs = await openPostgresBlobStore(url, tempRoot);
const before = Deno.memoryUsage().rss;
let peak = before;
const sampler = setInterval(() => peak = Math.max(peak, Deno.memoryUsage().rss), 2);
const adopted = await blobs.adopt(path);
clearInterval(sampler);
peak = Math.max(peak, Deno.memoryUsage().rss);
await blobs.close();
console.log(JSON.stringify({ ...adopted, growthMb: (peak - before) / 1048576 }));
