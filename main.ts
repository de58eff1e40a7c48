/**
 * The Sergo CLI: `serve`, `replay`, `log verify`, `projections digest` and the
 * admin commands. `deno task sergo --help` lists them.
 *
 * @module
 */
import { COMMANDS, runCommand } from "./src/cli/commands.ts";

if (import.meta.main) {
  const args = [...Deno.args];
  if (args.length === 0 || args[0] === "--help" || args[0] === "help") {
    console.log("Usage: sergo COMMAND [options]   (deno task sergo COMMAND …)\n\nCommands:");
    for (const [name, spec] of Object.entries(COMMANDS)) {
      console.log(`  ${name.padEnd(20)} ${spec.summary.split(".")[0]}`);
    }
    console.log(
      "\nEach command takes --help. Every setting and command: docs/configuration.md; connecting agents:" +
        " docs/connecting-agents.md (the docs/ folder of the repository).",
    );
    Deno.exit(args.length === 0 ? 2 : 0);
  }
  Deno.exit(await runCommand(args));
}
