import { startServer } from "../src/cli/serve.ts";
import { loadConfig } from "../src/config.ts";
Deno.env.set("SERGO_RATE_LIMIT", "1000000"); Deno.env.set("SERGO_RATE_BURST", "1000000");
const config = loadConfig(["--data", "/work/main/bench/data/startup-10000", "--port", "0"]);
const s = await startServer(config as any);
console.log("URL", s.url);
const mb = (n: number) => Math.round(n / 1e6);
setInterval(() => { const m = Deno.memoryUsage(); console.log("mem rss", mb(m.rss), "heapTotal", mb(m.heapTotal), "heapUsed", mb(m.heapUsed), "external", mb(m.external)); }, 1000);
