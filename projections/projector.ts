/**
 * The projector: applies events from the log to every projection, with each
 * projection's checkpoint written in the same transaction as its rows.
 *
 * @module
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";
import { type EventStore, StoredEventError } from "../events/store.ts";
import type { RecordedEvent } from "../events/types.ts";
import { noteApplied } from "./changes.ts";
import type { Projection } from "./projection.ts";

/**
 * Sets the size of a database's own page cache from the size of its file:
 * a fortieth of it, at least SQLite's default 2 MiB and at most 128 MiB.
 * SQLite fills it only as pages are read. At a million pages (a 4.8 GB index)
 * a search reads its terms' lists, the scope's list and its candidates' rows;
 * with 2 MiB they come from the operating system's cache, which this
 * machine's host pages out when idle a minute, so the slow searches wait on
 * the disk. With that cache emptied before each of the search benchmark's 300
 * queries: p99 796 ms with 2 MiB, 306 ms with 64 MiB, 318 ms with 128 MiB,
 * 269 ms with 256 MiB (p50 325, 100, 87, 75 ms). A fortieth keeps a small
 * store's process small (12 MiB at 100,000 pages, whose serving process has
 * a 300 MB budget).
 */
export function sizePageCache(db: DatabaseSync): number {
  const { bytes } = db.prepare(
    "SELECT (SELECT page_count FROM pragma_page_count()) * (SELECT page_size FROM pragma_page_size()) AS bytes",
  ).get() as { bytes: number };
  const kib = Math.min(131_072, Math.max(2_048, Math.round(bytes / 40 / 1024)));
  db.exec(`PRAGMA cache_size = -${kib}`);
  return kib;
}

/** The page cache is sized again after this many events applied (and when the projector opens). */
const RESIZE_EVERY = 5_000;

/**
 * How far a projection's stored checkpoint may lag behind the position it has
 * reached over events it does not handle (see {@linkcode Projector.applyBatch}):
 * past this many events it is written with the next batch, and a batch that
 * writes no rows then opens a transaction for it. A restart re-reads at most
 * this many events that change nothing.
 */
export const HOLD_CHECKPOINTS_FOR = 2_000;

/**
 * Each open projector's checkpoints as it holds them (ahead of the stored ones
 * over events nobody handles), by its database, for readers of a checkpoint
 * on the same connection ({@linkcode checkpointOf}).
 */
const held = new WeakMap<DatabaseSync, ReadonlyMap<string, number>>();

/**
 * The position up to which `projection` has applied the log through `db`: the
 * stored checkpoint, or the one the projector on `db` holds if it is further
 * (a held checkpoint is as good as a stored one: the events between them are
 * none the projection handles).
 */
export function checkpointOf(db: DatabaseSync, projection: string): number {
  const row = db.prepare("SELECT position FROM projection_checkpoints WHERE name = ?").get(projection) as
    | { position: number }
    | undefined;
  return Math.max(row?.position ?? 0, held.get(db)?.get(projection) ?? 0);
}

/** Options of {@linkcode openProjector}. */
export interface ProjectorOptions {
  /** Called after each batch with the position reached and the log's head. */
  onProgress?: (position: number, head: number) => void;
  /** Events read and applied per transaction. Default 500. */
  batchSize?: number;
}

/** Opens the projections database at `path` and creates every projection's tables. */
export function openProjector(
  path: string,
  projections: readonly Projection[],
  options: ProjectorOptions = {},
): Projector {
  return new Projector(path, projections, options);
}

/** Applies the log to the projections and answers where they stand. */
export class Projector {
  /** The projections database; reads go through the projections' queries. */
  readonly db: DatabaseSync;
  readonly #projections: readonly Projection[];
  readonly #options: ProjectorOptions;
  /** What `apply` gets: the database with its prepared statements reused. */
  readonly #applyDb: DatabaseSync;
  /** Where each projection stands: every event up to it is applied, or is none that it handles. */
  #checkpoints = new Map<string, number>();
  /** Each projection's checkpoint as last read from or written to the database (at most `#checkpoints`). */
  #stored = new Map<string, number>();
  #handlesByProjection = new Map<string, ReadonlySet<string>>();
  #failure: Error | null = null;
  /** Events applied since the page cache was last sized. */
  #sinceSized = 0;

  /** Opens the projector; prefer {@linkcode openProjector}. */
  constructor(path: string, projections: readonly Projection[], options: ProjectorOptions = {}) {
    this.db = new DatabaseSync(path);
    this.db.exec("PRAGMA busy_timeout = 10000");
    this.db.exec("PRAGMA journal_mode = WAL");
    this.db.exec("PRAGMA synchronous = NORMAL");
    this.db.exec("PRAGMA foreign_keys = OFF");
    sizePageCache(this.db);
    this.db.exec(
      "CREATE TABLE IF NOT EXISTS projection_checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL) WITHOUT ROWID",
    );
    this.#projections = projections;
    this.#options = options;
    this.#applyDb = reusingStatements(this.db);
    this.db.exec("BEGIN IMMEDIATE");
    try {
      for (const projection of projections) projection.init(this.db);
      this.db.exec("COMMIT");
    } catch (error) {
      this.db.exec("ROLLBACK");
      throw error;
    }
    this.#readCheckpoints();
    held.set(this.db, this.#checkpoints);
  }

  /** The lowest checkpoint over all projections: every event up to it is applied everywhere. */
  get position(): number {
    let lowest = Infinity;
    for (const projection of this.#projections) {
      lowest = Math.min(lowest, this.#checkpoints.get(projection.name) ?? 0);
    }
    return lowest === Infinity ? 0 : lowest;
  }

  /** The error that stopped the projector, if one did. */
  get failure(): Error | null {
    return this.#failure;
  }

  /** Applies every event the store holds past the projections' checkpoints. */
  catchUp(store: EventStore): number {
    if (this.#failure) throw this.#failure;
    const batchSize = this.#options.batchSize ?? 500;
    this.#readCheckpoints();
    let applied = 0;
    const head = store.head().position;
    for (;;) {
      let events: readonly RecordedEvent[];
      try {
        events = store.readFrom(this.position, batchSize);
      } catch (error) {
        // An event this version cannot read (a type or schema from a newer version sharing the log): the
        // projections stop before it, for good, and /healthz says so, rather than serve without it.
        if (!(error instanceof StoredEventError)) throw error;
        this.#failure = new Error(error.message);
        throw this.#failure;
      }
      if (events.length === 0) break;
      this.applyBatch(events);
      applied += events.length;
      this.#options.onProgress?.(this.position, Math.max(head, this.position));
    }
    // The head was read before the events: what lies between the last of them and it, the store left out
    // (MCP calls the shared log's copy does not keep; see applyBatch).
    if (head > this.position) this.applyBatch([], head);
    // A store grows while it serves: its cache grows with it, not only at the next start. Every audited
    // call is an event caught up on its own, so the file's size is read again only every few thousand.
    this.#sinceSized += applied;
    if (this.#sinceSized >= RESIZE_EVERY) {
      sizePageCache(this.db);
      this.#sinceSized = 0;
    }
    return applied;
  }

  /**
   * Applies a batch of consecutive events in one transaction. The checkpoints
   * are read inside the transaction (after taking the write lock), because
   * another process — a CLI command — may share this projections file and
   * have applied some of them already.
   *
   * A projection's checkpoint is written in the same transaction as its rows.
   * One that the batch gives no rows (none of its events is a type it handles)
   * moves on in memory only, and its stored checkpoint is written with a later
   * transaction: when it next gets rows, when it lags by
   * {@linkcode HOLD_CHECKPOINTS_FOR} events, or at close. A batch that gives no
   * projection rows (MCP calls on the shared log, whose audit entries live in
   * PostgreSQL) opens no transaction at all. Safe after a crash: a stored
   * checkpoint lags only over events its projection does not handle, and the
   * projector calls `apply` only for handled types, so re-reading them from
   * the stored checkpoint applies nothing twice and skips nothing.
   *
   * `through` (at or past the last event) moves the checkpoints over
   * positions after the events that the store left out: MCP calls the shared
   * log's copy does not keep (see `EventStore.subscribe`), which no
   * projection on it takes; a projection that takes them refuses it.
   */
  applyBatch(events: readonly RecordedEvent[], through = 0): void {
    const last = Math.max(events[events.length - 1]?.position ?? 0, through);
    if (events.length === 0 && last <= this.position) return;
    if (last > (events[events.length - 1]?.position ?? 0)) this.#passesOverCalls();
    if (!this.#givesRows(events, last)) {
      let lagging = false;
      for (const projection of this.#projections) {
        const name = projection.name;
        if ((this.#checkpoints.get(name) ?? 0) < last) this.#checkpoints.set(name, last);
        if (last - (this.#stored.get(name) ?? 0) >= HOLD_CHECKPOINTS_FOR) lagging = true;
      }
      // A write that fails (another process holding the file's lock too long) leaves them held, as safe,
      // and is tried again with the next batch.
      if (lagging) {
        try {
          this.#writeCheckpoints(false);
        } catch { /* held, see above */ }
      }
      return;
    }
    const changed: string[] = [];
    this.db.exec("BEGIN IMMEDIATE");
    try {
      this.#readCheckpoints();
      const setCheckpoint = this.#setCheckpoint();
      for (const projection of this.#projections) {
        const name = projection.name;
        const from = this.#checkpoints.get(name) ?? 0;
        if (from >= last) continue;
        const handles = this.#handles(projection);
        let count = 0;
        for (const event of events) {
          if (event.position <= from) continue;
          if (handles.has(event.type)) {
            projection.apply(this.#applyDb, event);
            count++;
          }
        }
        if (count > 0) changed.push(name);
        if (count > 0 || last - (this.#stored.get(name) ?? 0) >= HOLD_CHECKPOINTS_FOR) {
          setCheckpoint.run(name, last);
        }
      }
      this.db.exec("COMMIT");
    } catch (error) {
      this.db.exec("ROLLBACK");
      this.#stored.clear();
      this.#readCheckpoints();
      const position = events[0]!.position;
      this.#failure = new Error(
        `Cannot apply events from ${position}: ${error instanceof Error ? error.message : String(error)}`,
      );
      throw this.#failure;
    }
    for (const projection of this.#projections) {
      const name = projection.name;
      this.#checkpoints.set(name, Math.max(last, this.#checkpoints.get(name) ?? 0));
      if (changed.includes(name) || last - (this.#stored.get(name) ?? 0) >= HOLD_CHECKPOINTS_FOR) {
        this.#stored.set(name, last);
      }
    }
    for (const name of changed) noteApplied(this.db, name);
  }

  /** The name of the one projection that handles events of `type`, or null when none or several do. */
  soleHandler(type: string): string | null {
    const handlers = this.#projections.filter((projection) => this.#handles(projection).has(type));
    return handlers.length === 1 ? handlers[0]!.name : null;
  }

  /**
   * Records a batch of consecutive events that only `projection` handles as
   * applied: its rows and its checkpoint were committed through another
   * connection (the audit view's MCP calls, `audit_calls_thread.ts`), in one
   * transaction that skipped what its stored checkpoint already held. The
   * other projections move on as over any batch that gives them no rows
   * (see {@linkcode Projector.applyBatch}).
   */
  appliedElsewhere(events: readonly RecordedEvent[], projection: string): void {
    if (events.length === 0) return;
    const last = events[events.length - 1]!.position;
    let lagging = false;
    for (const each of this.#projections) {
      const name = each.name;
      if ((this.#checkpoints.get(name) ?? 0) < last) this.#checkpoints.set(name, last);
      if (name === projection) this.#stored.set(name, Math.max(last, this.#stored.get(name) ?? 0));
      else if (last - (this.#stored.get(name) ?? 0) >= HOLD_CHECKPOINTS_FOR) lagging = true;
    }
    if (lagging) {
      try {
        this.#writeCheckpoints(false);
      } catch { /* held, as in applyBatch */ }
    }
    noteApplied(this.db, projection);
  }

  /**
   * Whether some projection handles an event of the batch past its checkpoint
   * (as this process knows it: another process sharing the file can only have
   * moved checkpoints further, so a batch that gives no rows here gives none).
   */
  /** Refuses to pass over left-out MCP calls when a projection takes them. */
  #passesOverCalls(): void {
    const taker = this.#projections.find((projection) => this.#handles(projection).has("McpCalled"));
    if (taker) {
      throw new Error(`Cannot pass over MCP calls the log left out: the ${taker.name} projection takes them`);
    }
  }

  #givesRows(events: readonly RecordedEvent[], last: number): boolean {
    for (const projection of this.#projections) {
      const from = this.#checkpoints.get(projection.name) ?? 0;
      if (from >= last) continue;
      const handles = this.#handles(projection);
      for (const event of events) {
        if (event.position > from && handles.has(event.type)) return true;
      }
    }
    return false;
  }

  #setCheckpoint(): StatementSync {
    return this.#applyDb.prepare(
      "INSERT INTO projection_checkpoints (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position WHERE excluded.position > projection_checkpoints.position",
    );
  }

  /**
   * Writes the checkpoints held ahead of the stored ones (every one, or only
   * those lagging by {@linkcode HOLD_CHECKPOINTS_FOR}), in a transaction of
   * their own. A stored checkpoint never moves back: another process may
   * have written a further one.
   */
  #writeCheckpoints(all: boolean): void {
    const behind = this.#projections.filter((projection) => {
      const name = projection.name;
      const lag = (this.#checkpoints.get(name) ?? 0) - (this.#stored.get(name) ?? 0);
      return lag > 0 && (all || lag >= HOLD_CHECKPOINTS_FOR);
    });
    if (behind.length === 0) return;
    const setCheckpoint = this.#setCheckpoint();
    this.db.exec("BEGIN IMMEDIATE");
    try {
      for (const projection of behind) {
        setCheckpoint.run(projection.name, this.#checkpoints.get(projection.name) ?? 0);
      }
      this.db.exec("COMMIT");
    } catch (error) {
      this.db.exec("ROLLBACK");
      throw error;
    }
    for (const projection of behind) {
      this.#stored.set(projection.name, this.#checkpoints.get(projection.name) ?? 0);
    }
  }

  #handles(projection: Projection): ReadonlySet<string> {
    let handles = this.#handlesByProjection.get(projection.name);
    if (!handles) this.#handlesByProjection.set(projection.name, handles = new Set(projection.handles));
    return handles;
  }

  /**
   * Reads every checkpoint from the database (another process may have moved
   * them). One held here ahead of its stored one stays: the stored one lags
   * only over events its projection does not handle.
   */
  #readCheckpoints(): void {
    const rows = this.#applyDb.prepare("SELECT name, position FROM projection_checkpoints").all() as Array<
      { name: string; position: number }
    >;
    for (const row of rows) {
      this.#stored.set(row.name, row.position);
      this.#checkpoints.set(row.name, Math.max(row.position, this.#checkpoints.get(row.name) ?? 0));
    }
  }

  /** Writes the checkpoints held in memory and closes the database. */
  close(): void {
    try {
      if (this.#failure === null && this.db.isOpen) this.#writeCheckpoints(true);
    } catch {
      // Not written, as after a crash: the next open re-reads those events and applies none.
    } finally {
      this.db.close();
    }
  }
}

/** Statements kept per database; past this many distinct SQL texts the cache starts over. */
const STATEMENT_CACHE_SIZE = 500;

/**
 * The database as projections see it in `apply`: the same connection, but
 * `prepare` hands back the statement it prepared before for the same SQL.
 * Replay applies hundreds of thousands of events, and preparing the same few
 * statements for each of them cost more than running them. Safe because
 * `apply` runs statements to completion (`run`, `get`, `all`) before
 * preparing the same SQL again.
 */
function reusingStatements(db: DatabaseSync): DatabaseSync {
  const cache = new Map<string, StatementSync>();
  const prepare = (sql: string): StatementSync => {
    let statement = cache.get(sql);
    if (statement === undefined) {
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.clear();
      statement = db.prepare(sql);
      cache.set(sql, statement);
    }
    return statement;
  };
  return new Proxy(db, {
    get(target, property) {
      if (property === "prepare") return prepare;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
