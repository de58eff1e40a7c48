/**
 * Swagger UI's files for the API page, from the pinned `swagger-ui-dist`
 * npm package, served by Sergo itself (no CDN): only the bundle and its
 * stylesheet, read on first use and kept in memory.
 *
 * @module
 */
import swaggerUiPath from "swagger-ui-dist/absolute-path.js";

/** The files of swagger-ui-dist the API page loads, with their types. */
const FILES: Record<string, string> = {
  "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
  "swagger-ui.css": "text/css; charset=utf-8",
};

/** The vendor files, by name. */
export interface VendorFiles {
  /** Answers `GET /console/vendor/NAME`, or null when there is no such file. */
  serve(name: string): Promise<Response | null>;
}

/** The swagger-ui-dist files, loaded when first asked for. */
export function vendorFiles(): VendorFiles {
  const loaded = new Map<string, Promise<Uint8Array>>();
  return {
    async serve(name) {
      const type = Object.hasOwn(FILES, name) ? FILES[name] : undefined;
      if (!type) return null;
      let body = loaded.get(name);
      if (!body) loaded.set(name, body = Deno.readFile(`${swaggerUiPath()}/${name}`));
      return new Response(await body as Uint8Array<ArrayBuffer>, {
        headers: {
          "content-type": type,
          "cache-control": "public, max-age=86400",
          "x-content-type-options": "nosniff",
        },
      });
    },
  };
}
