/**
 * Word (.docx): paragraphs, lists and tables in order, chunked under their headings
 * (`section` = the heading text above, `null` before the first), footnotes appended to
 * the chunk that cites them, laid onto estimated pages.
 *
 * Heading levels come from the paragraph's style, resolved through `word/styles.xml`:
 * built-in names (`heading 1`…`heading 9`, `Title`), the style's `w:outlineLvl` (which
 * localized styles such as "Überschrift 1" carry), or its `basedOn` chain; a paragraph's
 * own `w:outlineLvl` also makes it a heading.
 *
 * Marks: an estimated page is marked when it holds a chart, a SmartArt diagram or a
 * picture covering at least {@link PDF_LARGE_PICTURE_FRACTION} of a page; the text of
 * ordinary Word pages is complete, so they are not marked.
 *
 * @module
 */
import type { ProcessedPage } from "../../events/types.ts";
import { PDF_LARGE_PICTURE_FRACTION, WORD_PAGE_AREA_EMU2 } from "./basic_rules.ts";
import { chartText } from "./_chart_text.ts";
import type { ExtractResult } from "./extract_result.ts";
import { findMainPart, readRelationships, type Relationship } from "./_opc.ts";
import { type LayoutChunk, paginate } from "./_paginate.ts";
import { child, childrenNamed, descendants, parseXml, textContent, type XNode } from "./_xml.ts";
import { openZip, type ZipPackage } from "./_zip.ts";
import { ProcessingError } from "./processing_error.ts";
import { WORD_MAIN } from "./detect_type.ts";

interface StyleInfo {
  name: string;
  basedOn?: string;
  outline?: number;
}

interface DocContext {
  zip: ZipPackage;
  rels: Map<string, Relationship>;
  styles: Map<string, StyleInfo>;
  footnotes: Map<string, string>;
  /** Set when the paragraph being read holds a chart, diagram or large picture. */
  visual: boolean;
  pendingNotes: string[];
}

function readStyles(zip: ZipPackage, rels: Map<string, Relationship>): Map<string, StyleInfo> {
  const styles = new Map<string, StyleInfo>();
  const part = [...rels.values()].find((r) => r.kind === "styles")?.target ?? "word/styles.xml";
  const xml = zip.readText(part);
  if (!xml) return styles;
  for (const style of childrenNamed(parseXml(xml, part), "style")) {
    if (style.attrs["w:type"] !== "paragraph") continue;
    const id = style.attrs["w:styleId"];
    if (!id) continue;
    const outline = child(child(style, "pPr"), "outlineLvl")?.attrs["w:val"];
    styles.set(id, {
      name: (child(style, "name")?.attrs["w:val"] ?? "").toLowerCase(),
      basedOn: child(style, "basedOn")?.attrs["w:val"],
      outline: outline === undefined ? undefined : Number(outline),
    });
  }
  return styles;
}

/** The heading level (1–9) of a paragraph style, or undefined for body text. */
function styleLevel(styles: Map<string, StyleInfo>, id: string | undefined): number | undefined {
  for (let depth = 0; id && depth < 20; depth++) {
    const style = styles.get(id);
    const name = style?.name ?? id.toLowerCase();
    if (name === "title") return 1;
    const builtin = name.match(/^heading\s*([1-9])$/);
    if (builtin) return Number(builtin[1]);
    if (style?.outline !== undefined && style.outline >= 0 && style.outline < 9) return style.outline + 1;
    if (!style) return undefined;
    id = style.basedOn;
  }
  return undefined;
}

function readFootnotes(zip: ZipPackage, rels: Map<string, Relationship>): Map<string, string> {
  const notes = new Map<string, string>();
  for (const kind of ["footnotes", "endnotes"]) {
    const part = [...rels.values()].find((r) => r.kind === kind)?.target;
    const xml = part ? zip.readText(part) : undefined;
    if (!xml || !part) continue;
    for (const note of parseXml(xml, part).children) {
      if (note.name !== "footnote" && note.name !== "endnote") continue;
      if (note.attrs["w:type"] && note.attrs["w:type"] !== "normal") continue;
      const ctx: DocContext = {
        zip,
        rels,
        styles: new Map(),
        footnotes: new Map(),
        visual: false,
        pendingNotes: [],
      };
      const text = childrenNamed(note, "p").map((p) => inlineText(p, ctx)).join(" ").trim();
      if (text) notes.set(`${kind}:${note.attrs["w:id"]}`, text);
    }
  }
  return notes;
}

function noteVisual(node: XNode, ctx: DocContext): void {
  const extent = descendants(node, "extent")[0];
  const area = (Number(extent?.attrs.cx) || 0) * (Number(extent?.attrs.cy) || 0);
  const data = descendants(node, "graphicData")[0];
  const uri = data?.attrs.uri ?? "";
  if (uri.endsWith("/chart") || uri.endsWith("/diagram")) ctx.visual = true;
  else if (area / WORD_PAGE_AREA_EMU2 >= PDF_LARGE_PICTURE_FRACTION) ctx.visual = true;
}

function drawingText(node: XNode, ctx: DocContext): string {
  noteVisual(node, ctx);
  const parts: string[] = [];
  for (const chart of descendants(node, "chart")) {
    const rel = ctx.rels.get(chart.attrs["r:id"] ?? "");
    const xml = rel && !rel.external ? ctx.zip.readText(rel.target) : undefined;
    if (xml && rel) parts.push(chartText(xml, rel.target));
  }
  for (const box of descendants(node, "txbxContent")) {
    parts.push(blockTexts(box, ctx).join("\n"));
  }
  return parts.filter((p) => p.trim()).join("\n");
}

/** The text of a paragraph's runs (w:t, tabs, breaks, fields, hyperlinks, math, text boxes). */
function inlineText(node: XNode, ctx: DocContext): string {
  let s = "";
  for (const c of node.children) {
    switch (c.name) {
      case "t":
        s += textContent(c);
        break;
      case "tab":
      case "ptab":
        s += "\t";
        break;
      case "br":
      case "cr":
        s += "\n";
        break;
      case "noBreakHyphen":
        s += "-";
        break;
      case "footnoteReference":
      case "endnoteReference": {
        const kind = c.name === "footnoteReference" ? "footnotes" : "endnotes";
        const note = ctx.footnotes.get(`${kind}:${c.attrs["w:id"]}`);
        const mark = `[${ctx.pendingNotes.length + 1}]`;
        if (note) {
          s += mark;
          ctx.pendingNotes.push(`${mark} ${note}`);
        }
        break;
      }
      case "drawing":
      case "pict":
      case "object": {
        const text = drawingText(c, ctx);
        if (text) s += `\n${text}\n`;
        break;
      }
      case "AlternateContent": {
        const choice = child(c, "Choice") ?? child(c, "Fallback");
        if (choice) s += inlineText(choice, ctx);
        break;
      }
      case "del":
      case "delText":
      case "instrText":
      case "rPr":
      case "pPr":
      case "fldData":
        break;
      default:
        if (c.children.length > 0) s += inlineText(c, ctx);
    }
  }
  return s;
}

function listPrefix(p: XNode): string {
  const numPr = child(child(p, "pPr"), "numPr");
  if (!numPr || child(numPr, "numId")?.attrs["w:val"] === "0") return "";
  const level = Number(child(numPr, "ilvl")?.attrs["w:val"]) || 0;
  return `${"  ".repeat(Math.min(level, 8))}- `;
}

function tableText(tbl: XNode, ctx: DocContext): string {
  const rows: string[] = [];
  for (const tr of descendantsShallow(tbl, "tr")) {
    const cells = descendantsShallow(tr, "tc").map((tc) =>
      blockTexts(tc, ctx).join(" ").replace(/\s*\n\s*/g, " ").trim()
    );
    if (cells.some((c) => c !== "")) rows.push(cells.join(" | "));
  }
  return rows.join("\n");
}

/** Children with this name, looking through content controls and custom XML wrappers. */
function descendantsShallow(node: XNode, name: string): XNode[] {
  const out: XNode[] = [];
  for (const c of node.children) {
    if (c.name === name) out.push(c);
    else if (c.name === "sdt" || c.name === "sdtContent" || c.name === "customXml" || c.name === "smartTag") {
      out.push(...descendantsShallow(c, name));
    }
  }
  return out;
}

/** Texts of the block-level content of a container (body, cell, text box). */
function blockTexts(container: XNode, ctx: DocContext): string[] {
  const out: string[] = [];
  walkBlocks(container, ctx, (block) => out.push(block.text));
  return out.filter((t) => t.trim());
}

interface Block {
  text: string;
  level?: number;
}

function walkBlocks(container: XNode, ctx: DocContext, emit: (block: Block) => void): void {
  for (const c of container.children) {
    if (c.name === "p") {
      const pPr = child(c, "pPr");
      const own = child(pPr, "outlineLvl")?.attrs["w:val"];
      const level = own !== undefined && Number(own) < 9
        ? Number(own) + 1
        : styleLevel(ctx.styles, child(pPr, "pStyle")?.attrs["w:val"]);
      const text = inlineText(c, ctx).replace(/[ \t]+\n/g, "\n").trim();
      if (text) emit({ text: level ? text.replace(/\s*\n\s*/g, " ") : listPrefix(c) + text, level });
    } else if (c.name === "tbl") {
      const text = tableText(c, ctx);
      if (text) emit({ text });
    } else if (c.name === "sdt" || c.name === "sdtContent" || c.name === "customXml" || c.name === "ins") {
      walkBlocks(c, ctx, emit);
    } else if (c.name === "AlternateContent") {
      const choice = child(c, "Choice") ?? child(c, "Fallback");
      if (choice) walkBlocks(choice, ctx, emit);
    }
  }
}

/** Extracts a Word document into heading chunks on estimated pages. */
export function extractDocx(bytes: Uint8Array): Promise<ExtractResult> {
  const zip = openZip(bytes);
  const main = zip.has("word/document.xml") ? "word/document.xml" : findMainPart(zip, WORD_MAIN);
  const xml = main ? zip.readText(main) : undefined;
  if (!main || xml === undefined) {
    throw new ProcessingError("This Word file has no document part (word/document.xml).");
  }
  const rels = readRelationships(zip, main);
  const ctx: DocContext = {
    zip,
    rels,
    styles: readStyles(zip, rels),
    footnotes: readFootnotes(zip, rels),
    visual: false,
    pendingNotes: [],
  };
  const body = child(parseXml(xml, main), "body");
  if (!body) throw new ProcessingError(`The Word part "${main}" has no body.`);

  const chunks: LayoutChunk[] = [];
  let section: string | null = null;
  let lines: string[] = [];
  const flush = (marked: boolean): void => {
    if (ctx.pendingNotes.length > 0) lines.push(ctx.pendingNotes.join("\n"));
    ctx.pendingNotes = [];
    const text = lines.join("\n").trim();
    if (text) chunks.push({ section, text, ...(marked ? { marked } : {}) });
    lines = [];
  };
  walkBlocks(body, ctx, (block) => {
    if (block.level !== undefined) {
      flush(false);
      section = block.text.slice(0, 2000);
    }
    lines.push(block.text);
    // A chart or large picture ends its chunk, so that only the page holding it is marked.
    if (ctx.visual) flush(true);
    ctx.visual = false;
  });
  flush(false);
  if (chunks.length === 0) throw new ProcessingError("This Word document holds no text.");
  const pages: ProcessedPage[] = paginate(chunks, { withChunks: true });
  return Promise.resolve({ type: "docx", page_count: pages.length, pages_estimated: true, pages });
}
