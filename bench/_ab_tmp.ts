import { openSqliteStore } from "../events/sqlite_store.ts";
import { ALL_PROJECTIONS } from "../projections/all.ts";
import { openProjector } from "../projections/projector.ts";
import { openProjector as openOrig } from "./_projector_orig_tmp.ts";
import { removeDatabase } from "../projections/replay.ts";
import { rawReplay } from "./_replay_baseline.ts";
const dir = "/work/main/bench/data/replay-10000";
for (let i = 0; i < 3; i++) {
  for (const [name, open] of [["new", openProjector], ["orig", openOrig], ["raw", null]] as const) {
    const store = openSqliteStore(`${dir}/events.db`);
    await removeDatabase("/tmp/ab.db");
    const t = performance.now();
    if (open) { const p = open("/tmp/ab.db", ALL_PROJECTIONS, { batchSize: 2000 }); p.catchUp(store); p.close(); }
    else rawReplay(store, "/tmp/ab.db", ALL_PROJECTIONS, 2000);
    console.log(name, (performance.now() - t).toFixed(0));
    await store.close();
  }
}
