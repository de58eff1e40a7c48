/**
 * What every MCP call reads before its tool runs — the key behind the
 * credential, the key's scope, its server's texts, a listing — kept between
 * calls while the catalogue and the key scopes are unchanged
 * (`projections/changes.ts`). Every look-up checks whether this process
 * applied a change to them; requests also check, at most once a
 * millisecond, whether another process (a CLI command sharing the
 * projections file) did: SQLite's `data_version` moved and, with it, the
 * stored checkpoints of the catalogue or the key scopes (the audit view's
 * thread commits many times a second and moves neither). Either empties the cache, so a key deleted, rolled,
 * renamed or given other folders, a folder renamed or moved, or a document
 * added shows on the next call as it would without the cache. Expiry is
 * checked on every call. Credentials are cached by their sha256, never by
 * their value.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { appliedCount, checkpointsStamp, dataVersion } from "../../projections/changes.ts";
import {
  type AgentKey,
  type Credential,
  credentialByHash,
  getAgentKey,
} from "../../projections/key_scopes.ts";
import type { KeyLookup } from "../auth/mcp_auth.ts";
import { type KeyScope, keyScope } from "./scope.ts";

/** The projections whose rows the cached values come from. */
const SOURCES = ["catalogue", "key_scopes"] as const;

/** Entries kept per kind; past this, that kind starts over. */
const MAX_ENTRIES = 10_000;
/** How often a request checks for other processes' changes, at most. */
const RECHECK_MS = 1;
/** Values kept per key (a scope, texts, listings for different arguments); past this, they start over. */
const MAX_PER_KEY = 64;

/** A cache of what calls read again and again, exact as long as its sources are unchanged. */
export class ReadCache implements KeyLookup {
  readonly #db: DatabaseSync;
  #applied = -1;
  #dataVersion = -1;
  /** The sources' stored checkpoints when the cache was last emptied for another connection's commit. */
  #stamp: string | null = null;
  #checkedAt = -Infinity;
  readonly #credentials = new Map<string, Credential>();
  readonly #keys = new Map<string, AgentKey>();
  /** Values computed for a key object (a key object read under an older stamp keeps its own). */
  #perKey = new WeakMap<AgentKey, Map<string, unknown>>();

  constructor(db: DatabaseSync) {
    this.#db = db;
  }

  /**
   * Starts a request: empties the cache if another connection committed to
   * the projections since the last check. Checked at most once a millisecond
   * (the check costs more than the rest of a cached look-up), so another
   * process's change — a CLI command's — shows within a millisecond.
   */
  refresh(): void {
    const now = performance.now();
    if (now - this.#checkedAt < RECHECK_MS) return;
    this.#checkedAt = now;
    const version = dataVersion(this.#db);
    if (version === this.#dataVersion) return;
    this.#dataVersion = version;
    // Another connection committed: a server's audit view thread many times a second, rarely a CLI command.
    // Only one that changed the sources' rows moved their checkpoints.
    const stamp = checkpointsStamp(this.#db, SOURCES);
    if (stamp === this.#stamp) return;
    this.#stamp = stamp;
    this.#clear();
  }

  /** Empties the cache when this process changed the catalogue or the key scopes since the last look-up. */
  #fresh(): void {
    const applied = appliedCount(this.#db, SOURCES);
    if (applied === this.#applied) return;
    this.#applied = applied;
    this.#clear();
  }

  #clear(): void {
    this.#credentials.clear();
    this.#keys.clear();
    this.#perKey = new WeakMap();
  }

  /** The credential with this sha256, expired or not; unknown hashes are not kept. */
  credential(hash: string): Credential | undefined {
    return this.#lookUp(this.#credentials, hash, () => credentialByHash(this.#db, hash));
  }

  /** An agent key by id. */
  agentKey(keyId: string): AgentKey | undefined {
    return this.#lookUp(this.#keys, keyId, () => getAgentKey(this.#db, keyId));
  }

  /** A kept value, or `load`'s (kept when there is one: misses are not). */
  #lookUp<V>(map: Map<string, V>, id: string, load: () => V | undefined): V | undefined {
    this.#fresh();
    const hit = map.get(id);
    if (hit !== undefined) return hit;
    const found = load();
    if (found !== undefined) keep(map, id, found);
    return found;
  }

  /** What a key can see now. */
  scope(key: AgentKey): KeyScope {
    return this.forKey(key, "scope", () => keyScope(this.#db, key));
  }

  /**
   * A value computed from a key and the catalogue alone (such as its server's
   * texts), kept under `kind` while the catalogue and key scopes are unchanged.
   */
  forKey<T>(key: AgentKey, kind: string, compute: () => T): T {
    this.#fresh();
    let values = this.#perKey.get(key);
    if (!values) this.#perKey.set(key, values = new Map());
    if (values.has(kind)) return values.get(kind) as T;
    const value = compute();
    if (values.size >= MAX_PER_KEY) values.clear();
    values.set(kind, value);
    return value;
  }
}

function keep<V>(map: Map<string, V>, id: string, value: V): void {
  if (map.size >= MAX_ENTRIES) map.clear();
  map.set(id, value);
}
