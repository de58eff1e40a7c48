/**
 * Safe XML reading for Office parts: no DTD, no entity expansion beyond the five
 * predefined entities and character references. Element names lose their namespace
 * prefix (`p:sp` → `sp`); attribute names keep it (`r:id`, `r:embed`).
 *
 * @module
 */
import { XMLParser } from "fast-xml-parser";
import { ProcessingError } from "./processing_error.ts";

/** An XML element with its local name; attributes keep their prefixed names. */
export interface XNode {
  name: string;
  attrs: Record<string, string>;
  children: XNode[];
  /** Text content of a text node (`name` is `#text`). */
  text?: string;
}

const parser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  removeNSPrefix: false,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  processEntities: false,
  htmlEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  maxNestedTags: 400,
});

const PREDEFINED: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/** Decodes the predefined XML entities and character references; any other entity is dropped. */
export function decodeEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z_][\w.-]*);/g, (_m, ref: string) => {
    if (ref.startsWith("#")) {
      const code = ref[1] === "x" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : "";
    }
    return PREDEFINED[ref] ?? "";
  });
}

type Raw = Record<string, unknown>;

function convert(raw: Raw[]): XNode[] {
  const out: XNode[] = [];
  for (const item of raw) {
    for (const key of Object.keys(item)) {
      if (key === ":@") continue;
      const value = item[key];
      if (key === "#text") {
        out.push({ name: "#text", attrs: {}, children: [], text: decodeEntities(String(value)) });
        continue;
      }
      if (key.startsWith("?") || key.startsWith("!")) continue;
      const attrsRaw = (item[":@"] ?? {}) as Record<string, unknown>;
      const attrs: Record<string, string> = {};
      for (const [name, v] of Object.entries(attrsRaw)) attrs[name] = decodeEntities(String(v));
      const local = key.includes(":") ? key.slice(key.indexOf(":") + 1) : key;
      out.push({ name: local, attrs, children: Array.isArray(value) ? convert(value as Raw[]) : [] });
    }
  }
  return out;
}

/** Parses an XML part into its root element; throws a {@link ProcessingError} naming the part. */
export function parseXml(xml: string, partName: string): XNode {
  let raw: Raw[];
  try {
    raw = parser.parse(xml) as Raw[];
  } catch (error) {
    const detail = error instanceof Error ? error.message.split("\n")[0] : String(error);
    throw new ProcessingError(`The part "${partName}" is not well-formed XML: ${detail}.`);
  }
  const root = convert(raw).find((n) => n.name !== "#text");
  if (!root) throw new ProcessingError(`The part "${partName}" holds no XML element.`);
  return root;
}

/** The first child element with this local name. */
export function child(node: XNode | undefined, name: string): XNode | undefined {
  return node?.children.find((c) => c.name === name);
}

/** Every child element with this local name. */
export function childrenNamed(node: XNode | undefined, name: string): XNode[] {
  return node ? node.children.filter((c) => c.name === name) : [];
}

/** Every descendant element with this local name, in document order. */
export function descendants(node: XNode, name: string, out: XNode[] = []): XNode[] {
  for (const c of node.children) {
    if (c.name === name) out.push(c);
    if (c.children.length > 0) descendants(c, name, out);
  }
  return out;
}

/** The concatenated text of all descendant text nodes. */
export function textContent(node: XNode): string {
  if (node.text !== undefined) return node.text;
  let s = "";
  for (const c of node.children) s += textContent(c);
  return s;
}
