/**
 * The handlers' side of a decision: the command's metadata at the app's time,
 * and the appends a decider returned, made in order.
 *
 * @module
 */
import type { AppendResult } from "../../events/store.ts";
import type { SergoApp } from "../app.ts";
import type { Append, CommandMetadata } from "./decision.ts";

/** A command's metadata for an actor, at the app's time now. */
export function commandMetadata(app: SergoApp, actor: string): CommandMetadata {
  return { now: app.now(), actor };
}

/** Makes the appends a decider returned, one after another; resolves with their results. */
export async function appendDecided(app: SergoApp, appends: readonly Append[]): Promise<AppendResult[]> {
  const results: AppendResult[] = [];
  for (const append of appends) {
    results.push(
      append.expectedVersion === undefined
        ? await app.append(append.stream, append.events)
        : await app.append(append.stream, append.events, { expectedVersion: append.expectedVersion }),
    );
  }
  return results;
}
