/**
 * Open Packaging Conventions helpers: relationships and the content-types map.
 *
 * @module
 */
import { childrenNamed, parseXml } from "./_xml.ts";
import { relsPathOf, resolvePartPath, type ZipPackage } from "./_zip.ts";

/** One relationship of a part. */
export interface Relationship {
  id: string;
  /** The relationship type's last path segment, such as `slide`, `notesSlide`, `chart`. */
  kind: string;
  /** The target part path inside the package (resolved), or the raw target when external. */
  target: string;
  external: boolean;
}

/** The relationships of a part by id (empty when the part has none). */
export function readRelationships(zip: ZipPackage, part: string): Map<string, Relationship> {
  const rels = new Map<string, Relationship>();
  const path = part === "" ? "_rels/.rels" : relsPathOf(part);
  const xml = zip.readText(path);
  if (xml === undefined) return rels;
  for (const rel of childrenNamed(parseXml(xml, path), "Relationship")) {
    const id = rel.attrs.Id ?? "";
    const type = rel.attrs.Type ?? "";
    const external = rel.attrs.TargetMode === "External";
    const target = rel.attrs.Target ?? "";
    rels.set(id, {
      id,
      kind: type.slice(type.lastIndexOf("/") + 1),
      target: external ? target : resolvePartPath(part, target),
      external,
    });
  }
  return rels;
}

/** The content type of each overridden part (`/word/document.xml` → its type), keyed without the leading slash. */
export function readContentTypes(zip: ZipPackage): Map<string, string> {
  const types = new Map<string, string>();
  const xml = zip.readText("[Content_Types].xml");
  if (xml === undefined) return types;
  for (const o of childrenNamed(parseXml(xml, "[Content_Types].xml"), "Override")) {
    types.set((o.attrs.PartName ?? "").replace(/^\//, ""), o.attrs.ContentType ?? "");
  }
  return types;
}

/** The package's main document part of a kind (`officeDocument` relationship or content type), if any. */
export function findMainPart(zip: ZipPackage, contentTypeMarker: string): string | undefined {
  for (const rel of readRelationships(zip, "").values()) {
    if (rel.kind === "officeDocument" && zip.has(rel.target)) {
      const type = readContentTypes(zip).get(rel.target) ?? "";
      if (type === "" || type.includes(contentTypeMarker)) return rel.target;
    }
  }
  for (const [part, type] of readContentTypes(zip)) {
    if (type.includes(contentTypeMarker) && zip.has(part)) return part;
  }
  return undefined;
}
