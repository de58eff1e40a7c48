/**
 * The embedding worker: after processing, computes the vectors of each
 * document's passages with the configured model and records them as a
 * `PassagesEmbedded` event, off the request path. Documents without vectors
 * of the current model — new ones, ones processed again, every one after the
 * model changed — are found in the projection, so a restart loses nothing.
 *
 * A document whose embedding fails is tried again after {@linkcode RETRY_MS};
 * the failure shows in `/healthz` meanwhile, and search stays lexical for it.
 *
 * @module
 */
import { documentsWithoutVectors, passageInputs } from "../../projections/search_vectors.ts";
import type { SergoApp } from "../app.ts";
import type { SemanticSearch } from "../search/semantic.ts";
import { packVectors } from "../search/vectors.ts";

/** How long a document whose embedding failed waits before it is tried again. */
export const RETRY_MS = 60_000;
/** Documents read from the projection per look. */
const BATCH = 8;

/** Embeds documents one at a time while there are some without vectors. */
export class EmbeddingWorker {
  readonly #app: SergoApp;
  readonly #semantic: SemanticSearch;
  readonly #failedAt = new Map<string, number>();
  #running: Promise<void> | null = null;
  #again = false;
  #stopped = false;
  /** How many documents were embedded (for tests and the benchmark). */
  embedded = 0;

  constructor(app: SergoApp, semantic: SemanticSearch) {
    this.#app = app;
    this.#semantic = semantic;
  }

  /** Looks for documents without vectors; a look already running looks again when done. */
  kick(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#run().catch((error) => {
      // Each document's failure is caught in #run; this is for the look itself (its projection query).
      console.error(
        `Looking for documents to embed failed: ${error instanceof Error ? error.message : error}`,
      );
    }).finally(() => {
      this.#running = null;
      if (this.#again) {
        this.#again = false;
        this.kick();
      }
    });
  }

  async #run(): Promise<void> {
    while (!this.#stopped) {
      const now = Date.now();
      for (const [id, at] of this.#failedAt) if (now - at >= RETRY_MS) this.#failedAt.delete(id);
      const ids = documentsWithoutVectors(this.#app.db, this.#semantic.model, BATCH + this.#failedAt.size)
        .filter((id) => !this.#failedAt.has(id))
        .slice(0, BATCH);
      if (ids.length === 0) return;
      for (const id of ids) {
        if (this.#stopped) return;
        try {
          await this.#embed(id);
          this.#semantic.noteSuccess();
        } catch (error) {
          this.#failedAt.set(id, Date.now());
          this.#semantic.noteFailure(error);
        }
      }
    }
  }

  async #embed(documentId: string): Promise<void> {
    const app = this.#app;
    const inputs = passageInputs(app.db, documentId);
    if (inputs.texts.length === 0) return;
    const vectors = await this.#semantic.embedder.embed(inputs.texts, "passage");
    const dimensions = vectors[0]!.length;
    // Processed again or deleted meanwhile: these vectors describe passages that are gone.
    if (passageInputs(app.db, documentId).sha256 !== inputs.sha256) return;
    await app.append(`document-${documentId}`, [{
      type: "PassagesEmbedded",
      data: {
        document_id: documentId,
        model: this.#semantic.model,
        dimensions,
        passages: vectors.length,
        text_sha256: inputs.sha256,
        vectors: packVectors(vectors, dimensions),
      },
      metadata: app.meta("system"),
    }]);
    if (documentsWithoutVectors(app.db, this.#semantic.model, 1_000_000).includes(documentId)) {
      throw new Error(`The vectors of document ${documentId} were not recorded: its passages changed`);
    }
    this.embedded++;
  }

  /** Waits until no document is being embedded. */
  async drain(): Promise<void> {
    while (this.#running) await this.#running;
  }

  /** Stops looking for work and waits for the document in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    await this.drain();
  }
}
