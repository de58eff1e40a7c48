/**
 * The console's static files (CSS, client scripts, icon), read once from
 * `assets/` and served with a version so browsers can cache them.
 *
 * @module
 */

const TYPES: Record<string, string> = {
  css: "text/css; charset=utf-8",
  js: "text/javascript; charset=utf-8",
  svg: "image/svg+xml",
};

/** The console's assets, by file name. */
export interface Assets {
  /** A short hash of every file, put in asset URLs. */
  version: string;
  /** Answers `GET /console/assets/NAME`, or null when there is no such file. */
  serve(name: string): Response | null;
}

/** Reads every file of `assets/` into memory. */
export async function loadAssets(): Promise<Assets> {
  const dir = new URL("./assets/", import.meta.url);
  const files = new Map<string, { body: Uint8Array; type: string }>();
  for await (const entry of Deno.readDir(dir)) {
    if (!entry.isFile) continue;
    const extension = entry.name.split(".").pop() ?? "";
    const type = TYPES[extension];
    if (!type) continue;
    files.set(entry.name, { body: await Deno.readFile(new URL(entry.name, dir)), type });
  }
  const names = [...files.keys()].sort();
  const all = new Uint8Array(names.reduce((size, name) => size + files.get(name)!.body.byteLength, 0));
  let offset = 0;
  for (const name of names) {
    all.set(files.get(name)!.body, offset);
    offset += files.get(name)!.body.byteLength;
  }
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", all));
  const version = [...digest.slice(0, 6)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return {
    version,
    serve(name) {
      const file = files.get(name);
      if (!file) return null;
      return new Response(file.body as Uint8Array<ArrayBuffer>, {
        headers: {
          "content-type": file.type,
          "cache-control": "public, max-age=31536000, immutable",
          "x-content-type-options": "nosniff",
        },
      });
    },
  };
}
