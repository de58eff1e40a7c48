/**
 * One open Sergo data directory: the event log, the projections kept up to
 * date with it (own writes at once, other processes' within a second), and
 * the blob store.
 *
 * @module
 */
import { join } from "node:path";
import type { DatabaseSync } from "node:sqlite";
import type { AppendOptions, AppendResult, LogHead, TellSpan } from "../events/store.ts";
import { openSqliteStore, type SqliteEventStore } from "../events/sqlite_store.ts";
import type { AuditCalls } from "../events/postgres/audit_calls.ts";
import { openPostgresStore, type PostgresEventStore } from "../events/postgres/store.ts";
import type { RecordedEvent, SergoEvent } from "../events/types.ts";
import { projectionsFor } from "../projections/all.ts";
import { openProjector, type Projector, type ProjectorOptions } from "../projections/projector.ts";
import { type AuditCallsOutcome, AuditCallsThread } from "../projections/audit_calls_thread.ts";
import { type Blobs, BlobStore } from "./blob_store.ts";
import { openPostgresBlobStore, type PostgresBlobStore } from "./postgres_blob_store.ts";

/** Options of {@linkcode openApp}. */
export interface AppOptions {
  /** The clock; tests pass their own. */
  now?: () => Date;
  /** Progress of the first catch-up (a rebuild after the projections were deleted). */
  onProgress?: ProjectorOptions["onProgress"];
  /** Where the log's commits run; a server uses its writer thread. */
  writer?: "inline" | "thread";
  /** How long an append waits for the writer thread before it fails, in ms (default 30 s). */
  writerTimeoutMs?: number;
  /**
   * The shared log in PostgreSQL (`SERGO_DATABASE_URL`); unset, the SQLite log
   * in the data directory. The projections stay in the data directory either way.
   */
  databaseUrl?: string | null;
}

/** The event log of an open data directory: the embedded SQLite log or the shared PostgreSQL one. */
export type AppEventStore = SqliteEventStore | PostgresEventStore;

/**
 * Opens the log: with a database URL, the shared log in PostgreSQL (its local
 * copy, `log-cache.db`, in the data directory); else `events.db` there.
 */
export async function openEventStore(dataDir: string, options: AppOptions = {}): Promise<AppEventStore> {
  const paths = dataPaths(dataDir);
  if (options.databaseUrl) return await openPostgresStore(options.databaseUrl, { cachePath: paths.logCache });
  return openSqliteStore(paths.events, { writer: options.writer, writerTimeoutMs: options.writerTimeoutMs });
}

/** Paths inside a data directory. */
export function dataPaths(
  dataDir: string,
): { events: string; logCache: string; projections: string; blobs: string } {
  return {
    events: join(dataDir, "events.db"),
    logCache: join(dataDir, "log-cache.db"),
    projections: join(dataDir, "projections.db"),
    blobs: join(dataDir, "blobs"),
  };
}

/** Opens a data directory, creating it if needed, and brings the projections up to the log's head. */
export async function openApp(dataDir: string, options: AppOptions = {}): Promise<SergoApp> {
  await Deno.mkdir(dataDir, { recursive: true });
  const paths = dataPaths(dataDir);
  // The log and the blobs open side by side: on PostgreSQL each is a connection and a schema check.
  const [opened, blobsOpened] = await Promise.allSettled([
    openEventStore(dataDir, options),
    // Shared blobs live beside the shared log; upload files wait in the data directory's blobs/tmp.
    options.databaseUrl
      ? openPostgresBlobStore(options.databaseUrl, join(paths.blobs, "tmp"))
      : Promise.resolve(new BlobStore(paths.blobs)),
  ]);
  if (opened.status === "rejected" || blobsOpened.status === "rejected") {
    if (opened.status === "fulfilled") await opened.value.close();
    if (blobsOpened.status === "fulfilled") await closeBlobs(blobsOpened.value);
    throw opened.status === "rejected" ? opened.reason : (blobsOpened as PromiseRejectedResult).reason;
  }
  const store = opened.value;
  const blobs: Blobs = blobsOpened.value;
  let projector: Projector;
  try {
    projector = openProjector(paths.projections, projectionsFor(store), { onProgress: options.onProgress });
  } catch (error) {
    await store.close();
    await closeBlobs(blobs);
    throw error;
  }
  const projected = projector.position, head = store.head().position;
  if (projected > head) {
    // Projections of another log (say, the embedded one before SERGO_DATABASE_URL was set) would lie.
    projector.close();
    await store.close();
    await closeBlobs(blobs);
    throw new Error(
      `The projections in "${paths.projections}" are at event ${projected}, past the log's head ` +
        `(${head}): they were built from another log; remove the file to rebuild it`,
    );
  }
  const app = new SergoApp(dataDir, store, projector, blobs, options.now ?? (() => new Date()));
  // A server (its log's commits on the writer thread) stores its calls' audit entries on a thread too.
  if (options.writer === "thread" && !options.databaseUrl) app.storeAuditCallsOnThread(paths.projections);
  app.catchUp();
  return app;
}

/** Closes a blob store that holds connections (the PostgreSQL one). */
async function closeBlobs(blobs: Blobs): Promise<void> {
  await (blobs as Partial<PostgresBlobStore>).close?.();
}

/**
 * How long the audit entries of answered MCP calls wait before they are
 * applied to the audit view (unless something reads it or another event comes
 * first): the view's transaction, checkpoint and index pages are then shared
 * by every group commit in that window. Applying `McpCalled` entries cost the
 * event loop 13.1 µs each in transactions of 25 (one group commit under 50
 * connections), 9.7 µs in transactions of 100 and 9.0 µs of 250.
 */
export const AUDIT_SETTLE_MS = 10;

/** An open data directory. */
export class SergoApp {
  #poll: ReturnType<typeof setInterval> | null = null;
  #unsubscribe: () => void;
  #listeners = new Set<(events: readonly RecordedEvent[]) => void>();
  #seen: number;
  /** Audit entries committed here and not applied yet (see {@linkcode SergoApp.settle}), and the span they cover. */
  #pendingAudit: RecordedEvent[] = [];
  #pendingSpan: TellSpan | null = null;
  #auditTimer: ReturnType<typeof setTimeout> | null = null;
  /** Where audit entries of MCP calls are stored, when not on the event loop (see {@linkcode SergoApp.settle}). */
  #auditThread: AuditCallsThread | null = null;

  /** Wraps an opened store and projector; prefer {@linkcode openApp}. */
  constructor(
    readonly dataDir: string,
    readonly store: AppEventStore,
    readonly projector: Projector,
    readonly blobs: Blobs,
    readonly now: () => Date,
  ) {
    this.#seen = projector.position;
    // Own appends are applied before the appender's promise continues (read-your-writes),
    // except MCP calls' audit entries, applied once the calls are answered (see settle()).
    this.#unsubscribe = store.subscribe((events, span) => this.#applyCommitted(events, span));
  }

  /**
   * Stores the audit view's entries of MCP calls on a thread of its own
   * (`projections/audit_calls_thread.ts`) rather than on the event loop, where
   * only the audit view handles them.
   */
  storeAuditCallsOnThread(projectionsPath: string): void {
    if (this.#auditThread !== null || this.projector.soleHandler("McpCalled") !== "audit_view") return;
    this.#auditThread = new AuditCallsThread(
      projectionsPath,
      this.projector,
      (events, outcome) => this.#auditStored(events, outcome),
    );
  }

  /** The projections database, for queries. */
  get db(): DatabaseSync {
    return this.projector.db;
  }

  /**
   * Where the audit view's MCP calls are read from besides the projections:
   * the shared log's database (null on the embedded log, whose audit view
   * holds them); see projections/audit_view.ts.
   */
  get auditCalls(): AuditCalls | null {
    return "auditCalls" in this.store ? this.store.auditCalls : null;
  }

  /** The log's head. */
  head(): LogHead {
    return this.store.head();
  }

  /**
   * Applies whatever the log holds past the projections, and tells listeners
   * about every event new to this process — also those another process (a
   * CLI command sharing the projections file) applied already.
   */
  catchUp(): number {
    this.settle();
    const applied = this.projector.catchUp(this.store);
    const reached = this.projector.position;
    if (reached > this.#seen) {
      const from = this.#seen;
      this.#seen = reached;
      // At most reached - from events lie there (fewer when the store left MCP calls out: see EventStore.subscribe).
      if (this.#listeners.size > 0) {
        this.#notify(this.store.readFrom(from, reached - from).filter((event) => event.position <= reached));
      }
    }
    return applied;
  }

  /**
   * Applies events this process just committed straight from memory when
   * they follow the projections' position, instead of reading them back from
   * the log; anything else (another process wrote in between) catches up.
   */
  #applyCommitted(events: readonly RecordedEvent[], told?: TellSpan): void {
    const first = events[0], last = events[events.length - 1];
    const span = told ?? (first && last ? { after: first.position - 1, through: last.position } : null);
    if (span === null) return;
    if (events.every((event) => event.type === "McpCalled")) {
      // Spans applied together must follow each other.
      if (this.#pendingSpan !== null && this.#pendingSpan.through !== span.after) this.settle();
      this.#pendingAudit.push(...events);
      this.#pendingSpan = { after: this.#pendingSpan?.after ?? span.after, through: span.through };
      this.#auditTimer ??= setTimeout(() => {
        this.#auditTimer = null;
        if (this.#auditThread === null) this.settle();
        else this.#handAudit();
      }, AUDIT_SETTLE_MS);
      return;
    }
    this.settle();
    this.#applyNow(events, span);
  }

  /**
   * Applies the audit entries of MCP calls this process committed and has not
   * applied yet. A batch of nothing but `McpCalled` events (what a busy MCP
   * endpoint commits) is applied within {@linkcode AUDIT_SETTLE_MS} of its
   * commit, with the batches committed in between, so the calls it records are
   * answered first and the view's transaction is shared by several group
   * commits: nothing in a call's answer reads the audit view, and applying it
   * was about a third of the event loop's work per audited call. Anything else
   * applies them first, in order; code that reads the audit view calls this
   * before reading. The events are durable before the calls are answered
   * either way, and a crash before they are applied leaves them to the next
   * catch-up from the log.
   */
  settle(): void {
    if (this.#auditThread !== null) {
      this.#handAudit();
      // Waits for the thread (a batch takes about a millisecond): what was answered is in the view after this.
      this.#auditThread.finish();
      return;
    }
    const span = this.#pendingSpan;
    if (span === null) return;
    const events = this.#pendingAudit;
    this.#pendingAudit = [];
    this.#pendingSpan = null;
    this.#applyNow(events, span);
  }

  /**
   * Hands the pending audit entries to the audit view's thread when they
   * follow what the projections applied and what the thread holds; else
   * (another process wrote in between, or the thread failed) the thread
   * finishes and they are applied here, as without it.
   */
  #handAudit(): void {
    const thread = this.#auditThread!;
    const span = this.#pendingSpan;
    if (span === null) return;
    const events = this.#pendingAudit;
    this.#pendingAudit = [];
    this.#pendingSpan = null;
    const position = this.projector.position;
    const follows = thread.lastPosted ?? position;
    // The thread takes a run of calls with no position left out (a SQLite log leaves none out).
    const whole = events.length === span.through - span.after;
    if (
      whole && !thread.failed && !this.projector.failure && this.#seen === position &&
      span.after === follows && events[0]!.position === follows + 1
    ) {
      thread.post(events);
      return;
    }
    thread.finish();
    this.#applyNow(events, span);
  }

  /** A batch the audit view's thread is done with: recorded as applied, or applied here if it was not. */
  #auditStored(events: readonly RecordedEvent[], outcome: AuditCallsOutcome): void {
    if (outcome === "not applied") {
      this.#applyNow(events, {
        after: events[0]!.position - 1,
        through: events[events.length - 1]!.position,
      });
      return;
    }
    this.projector.appliedElsewhere(events, "audit_view");
    this.#seen = this.projector.position;
    this.#notify(events);
  }

  /** Applies events that cover `span` (positions in it without an event are calls the store left out). */
  #applyNow(events: readonly RecordedEvent[], span: TellSpan): void {
    const position = this.projector.position;
    if (this.projector.failure || span.after !== position || this.#seen !== position) {
      this.catchUp();
      return;
    }
    try {
      this.projector.applyBatch(events, span.through);
    } catch (error) {
      console.error("Applying new events failed:", error);
      return;
    }
    this.#seen = this.projector.position;
    if (events.length > 0) this.#notify(events);
  }

  #notify(events: readonly RecordedEvent[]): void {
    for (const listener of this.#listeners) {
      try {
        listener(events);
      } catch (error) {
        console.error("A projection listener failed:", error);
      }
    }
  }

  /** Calls `listener` with events after the projections have applied them. */
  onApplied(listener: (events: readonly RecordedEvent[]) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Appends events to a stream; resolves once they are durable and projected. */
  async append(stream: string, events: SergoEvent[], options?: AppendOptions): Promise<AppendResult> {
    const result = await this.store.append(stream, events, options);
    this.catchUp();
    return result;
  }

  /** Metadata for an event decided now. */
  meta(actor: string, extra: Partial<SergoEvent["metadata"]> = {}): SergoEvent["metadata"] {
    return { time: this.now().toISOString(), actor, ...extra };
  }

  /** Watches the log for events appended by other processes, every `intervalMs`. */
  watch(intervalMs = 250): void {
    if (this.#poll !== null) return;
    let reported: unknown = null;
    this.#poll = setInterval(() => {
      try {
        if (this.store.head().position > this.#seen) this.catchUp();
      } catch (error) {
        // Once per failure: the projector's lasts (an event it cannot read stays so), /healthz shows it.
        if (error !== reported) console.error("Catching up with the log failed:", error);
        reported = error;
      }
    }, intervalMs);
  }

  /** Stops watching, finishes pending appends and closes the databases. */
  async close(): Promise<void> {
    if (this.#poll !== null) clearInterval(this.#poll);
    this.#poll = null;
    if (this.#auditTimer !== null) clearTimeout(this.#auditTimer);
    this.#auditTimer = null;
    this.settle();
    this.#unsubscribe();
    await this.#auditThread?.close();
    await this.store.close();
    await closeBlobs(this.blobs);
    this.projector.close();
  }
}
