/**
 * Page views with a cache: a page drawn (or cut out) once is kept as a derived
 * blob keyed by the source PDF's sha256, the page, the format and the dpi, so
 * the next view is a file read. The cache can be deleted at any time; pages
 * are drawn again on demand. Concurrent views of the same page draw it once.
 *
 * @module
 */
import { type Blobs, BlobStore } from "../blob_store.ts";
import type { RenderPool } from "./render_pool.ts";
import { PAGE_DPI, PageRenderError } from "./page_drawing.ts";

/** The format of a page view: a PNG picture or a one-page PDF. */
export type PageViewFormat = "image" | "pdf";

/** Where a page view is cached. */
export interface PageViewsOptions {
  /** Where the derived blobs go; default the source store itself. */
  cache?: BlobStore;
}

/** The cache key of a page view. */
export function pageViewKey(sourceSha256: string, page: number, format: PageViewFormat): string {
  return `page-view:v1:${sourceSha256}:${page}:${format}:${PAGE_DPI}dpi`;
}

/** Draws pages of stored PDFs through a render pool, with a blob cache in front. */
export class PageViews {
  readonly #blobs: Blobs;
  readonly #pool: RenderPool;
  readonly #cache: BlobStore;
  readonly #inFlight = new Map<string, Promise<Uint8Array>>();

  /** Reads sources from `blobs`, draws with `pool`, caches in `options.cache` (default `blobs`). */
  constructor(blobs: Blobs, pool: RenderPool, options: PageViewsOptions = {}) {
    this.#blobs = blobs;
    this.#pool = pool;
    if (!options.cache && !(blobs instanceof BlobStore)) {
      throw new Error("Page views of shared blobs need a local cache");
    }
    this.#cache = options.cache ?? (blobs as BlobStore);
  }

  /**
   * Page `page` (from 1) of the stored PDF `sourceSha256` as a PNG or a
   * one-page PDF; rejects with a `PageRenderError` when it cannot be drawn.
   */
  view(sourceSha256: string, page: number, format: PageViewFormat): Promise<Uint8Array> {
    const key = pageViewKey(sourceSha256, page, format);
    const running = this.#inFlight.get(key);
    if (running) return running;
    const promise = this.#produce(key, sourceSha256, page, format).finally(() => this.#inFlight.delete(key));
    this.#inFlight.set(key, promise);
    return promise;
  }

  async #produce(
    key: string,
    sourceSha256: string,
    page: number,
    format: PageViewFormat,
  ): Promise<Uint8Array> {
    const name = this.#cache.derivedName(key);
    try {
      return await this.#cache.read(name);
    } catch {
      // Not cached (or the cache was deleted): draw it.
    }
    let pdfBytes: Uint8Array;
    try {
      pdfBytes = await this.#blobs.read(sourceSha256);
    } catch {
      throw new PageRenderError(
        `Cannot draw page ${page}: the PDF "${sourceSha256}" is not in the blob store`,
      );
    }
    const bytes = await this.#pool.render({ pdfBytes, page, format });
    try {
      await this.#cache.writeDerived(key, bytes);
    } catch {
      // A cache that cannot be written only costs a redraw next time.
    }
    return bytes;
  }
}
