/**
 * PowerPoint (.pptx): one page per slide in presentation order, the text of every shape
 * in reading order (top to bottom, then left to right; groups, tables, charts, SmartArt,
 * footer/number/date placeholders), speaker notes apart, and Basic marks.
 *
 * @module
 */
import type { ProcessedPage } from "../../events/types.ts";
import { PPTX_MANY_CONNECTORS, PPTX_MANY_SHAPES, PPTX_MIN_PICTURE_FRACTION } from "./basic_rules.ts";
import { chartText } from "./_chart_text.ts";
import type { ExtractResult } from "./extract_result.ts";
import { findMainPart, readRelationships, type Relationship } from "./_opc.ts";
import { child, childrenNamed, descendants, parseXml, textContent, type XNode } from "./_xml.ts";
import { openZip, type ZipPackage } from "./_zip.ts";
import { ProcessingError } from "./processing_error.ts";

interface Placed {
  x: number;
  y: number;
  text: string;
}

/** What a slide's shapes hold, for the mark. */
interface SlideFeatures {
  pictures: number;
  charts: number;
  diagrams: number;
  drawnShapes: number;
  connectors: number;
}

interface SlideContext {
  zip: ZipPackage;
  part: string;
  rels: Map<string, Relationship>;
  layoutPositions: Map<string, { x: number; y: number }>;
  slideArea: number;
  features: SlideFeatures;
}

/** The text of a DrawingML text body: paragraphs on lines, `a:br` as line breaks. */
function bodyText(body: XNode | undefined): string {
  if (!body) return "";
  const paragraphs: string[] = [];
  for (const p of childrenNamed(body, "p")) {
    let line = "";
    for (const run of p.children) {
      if (run.name === "r" || run.name === "fld") {
        line += child(run, "t") ? textContent(child(run, "t")!) : "";
      } else if (run.name === "br") line += "\n";
    }
    paragraphs.push(line.trimEnd());
  }
  return paragraphs.join("\n").replace(/\n{3,}/g, "\n\n").trim();
}

function tableText(tbl: XNode): string {
  return childrenNamed(tbl, "tr")
    .map((tr) =>
      childrenNamed(tr, "tc")
        .filter((tc) => tc.attrs.hMerge !== "1" && tc.attrs.vMerge !== "1")
        .map((tc) => bodyText(child(tc, "txBody")).replace(/\n/g, " "))
        .join(" | ")
    )
    .filter((row) => row.replace(/[|\s]/g, "") !== "")
    .join("\n");
}

function placeholderKey(sp: XNode): string | undefined {
  const nv = sp.children.find((c) => c.name.startsWith("nv"));
  const ph = child(child(nv, "nvPr"), "ph");
  if (!ph) return undefined;
  return `${ph.attrs.type ?? "body"}|${ph.attrs.idx ?? ""}`;
}

function offsetOf(shape: XNode): { x: number; y: number; cx: number; cy: number } | undefined {
  const pr = child(shape, "spPr") ?? child(shape, "grpSpPr");
  const xfrm = child(pr, "xfrm") ?? child(shape, "xfrm");
  const off = child(xfrm, "off");
  if (!off) return undefined;
  const ext = child(xfrm, "ext");
  return {
    x: Number(off.attrs.x) || 0,
    y: Number(off.attrs.y) || 0,
    cx: Number(ext?.attrs.cx) || 0,
    cy: Number(ext?.attrs.cy) || 0,
  };
}

function positionOf(shape: XNode, ctx: SlideContext): { x: number; y: number } {
  const own = offsetOf(shape);
  if (own) return own;
  const key = placeholderKey(shape);
  if (key) {
    const exact = ctx.layoutPositions.get(key) ?? ctx.layoutPositions.get(`${key.split("|")[0]}|`);
    if (exact) return exact;
    if (/^(title|ctrTitle)\|/.test(key)) return { x: 0, y: -1 };
  }
  return { x: 0, y: Number.MAX_SAFE_INTEGER / 2 };
}

function hasText(body: XNode | undefined): boolean {
  return body !== undefined && descendants(body, "t").some((t) => textContent(t).trim() !== "");
}

function readPart(ctx: SlideContext, relId: string | undefined): string | undefined {
  const rel = relId ? ctx.rels.get(relId) : undefined;
  if (!rel || rel.external) return undefined;
  return ctx.zip.readText(rel.target);
}

function smartArtText(xml: string, part: string): string {
  const root = parseXml(xml, part);
  const texts: string[] = [];
  for (const pt of descendants(root, "pt")) {
    if (pt.attrs.type && pt.attrs.type !== "node" && pt.attrs.type !== "doc") continue;
    const t = bodyText(child(pt, "t"));
    if (t) texts.push(t);
  }
  return texts.join("\n");
}

function collectShapes(
  tree: XNode,
  ctx: SlideContext,
  out: Placed[],
  groupPos?: { x: number; y: number },
): void {
  for (const shape of tree.children) {
    const pos = groupPos ?? positionOf(shape, ctx);
    switch (shape.name) {
      case "sp": {
        const body = child(shape, "txBody");
        const text = bodyText(body);
        if (text) out.push({ ...pos, text });
        const pr = child(shape, "spPr");
        if (child(pr, "blipFill")) countPicture(shape, ctx);
        else if (!hasText(body) && !placeholderKey(shape)) ctx.features.drawnShapes++;
        break;
      }
      case "cxnSp":
        ctx.features.connectors++;
        break;
      case "pic":
        countPicture(shape, ctx);
        break;
      case "grpSp": {
        const inner: Placed[] = [];
        collectShapes(shape, ctx, inner);
        sortReadingOrder(inner);
        const text = inner.map((p) => p.text).join("\n");
        if (text) out.push({ ...pos, text });
        break;
      }
      case "graphicFrame": {
        const data = child(child(shape, "graphic"), "graphicData");
        const text = graphicText(data, ctx);
        if (text) out.push({ ...pos, text });
        break;
      }
      case "AlternateContent": {
        const choice = child(shape, "Choice") ?? child(shape, "Fallback");
        if (choice) collectShapes(choice, ctx, out, groupPos);
        break;
      }
    }
  }
}

function countPicture(shape: XNode, ctx: SlideContext): void {
  const pos = offsetOf(shape);
  if (pos && pos.cx > 0 && pos.cy > 0 && (pos.cx * pos.cy) / ctx.slideArea < PPTX_MIN_PICTURE_FRACTION) {
    return;
  }
  ctx.features.pictures++;
}

function graphicText(data: XNode | undefined, ctx: SlideContext): string {
  if (!data) return "";
  const uri = data.attrs.uri ?? "";
  const tbl = child(data, "tbl");
  if (tbl) return tableText(tbl);
  if (uri.endsWith("/chart") || child(data, "chart")) {
    ctx.features.charts++;
    const id = child(data, "chart")?.attrs["r:id"];
    const xml = readPart(ctx, id);
    return xml ? chartText(xml, ctx.rels.get(id ?? "")?.target ?? "chart") : "";
  }
  if (uri.endsWith("/diagram") || child(data, "relIds")) {
    ctx.features.diagrams++;
    const id = child(data, "relIds")?.attrs["r:dm"];
    const xml = readPart(ctx, id);
    return xml ? smartArtText(xml, ctx.rels.get(id ?? "")?.target ?? "diagram") : "";
  }
  ctx.features.pictures++; // OLE objects, media and other embedded content
  return "";
}

function sortReadingOrder(items: Placed[]): void {
  const band = (y: number): number => Math.round(y / 150_000); // about 0.4 cm rows
  items.sort((a, b) => band(a.y) - band(b.y) || a.x - b.x);
}

function layoutPositions(
  zip: ZipPackage,
  rels: Map<string, Relationship>,
): Map<string, { x: number; y: number }> {
  const positions = new Map<string, { x: number; y: number }>();
  const layout = [...rels.values()].find((r) => r.kind === "slideLayout");
  if (!layout) return positions;
  const parts = [layout.target];
  const master = [...readRelationships(zip, layout.target).values()].find((r) => r.kind === "slideMaster");
  if (master) parts.push(master.target);
  for (const part of parts) {
    const xml = zip.readText(part);
    if (!xml) continue;
    for (const sp of descendants(parseXml(xml, part), "sp")) {
      const key = placeholderKey(sp);
      const pos = offsetOf(sp);
      if (!key || !pos) continue;
      if (!positions.has(key)) positions.set(key, pos);
      const typeOnly = `${key.split("|")[0]}|`;
      if (!positions.has(typeOnly)) positions.set(typeOnly, pos);
    }
  }
  return positions;
}

function notesText(zip: ZipPackage, rels: Map<string, Relationship>): string {
  const rel = [...rels.values()].find((r) => r.kind === "notesSlide");
  const xml = rel ? zip.readText(rel.target) : undefined;
  if (!xml || !rel) return "";
  const texts: string[] = [];
  for (const sp of descendants(parseXml(xml, rel.target), "sp")) {
    const key = placeholderKey(sp) ?? "";
    if (/^(sldNum|sldImg|hdr|ftr|dt)\|/.test(key)) continue;
    const t = bodyText(child(sp, "txBody"));
    if (t) texts.push(t);
  }
  return texts.join("\n").trim();
}

/** Whether a slide's shapes call for a look at the page, by the Basic rules. */
function isMarked(f: SlideFeatures): boolean {
  return f.pictures > 0 || f.charts > 0 || f.diagrams > 0 || f.drawnShapes >= PPTX_MANY_SHAPES ||
    f.connectors >= PPTX_MANY_CONNECTORS;
}

/** Extracts a PowerPoint presentation, one page per slide. */
export function extractPptx(bytes: Uint8Array): Promise<ExtractResult> {
  const zip = openZip(bytes);
  const main = zip.has("ppt/presentation.xml") ? "ppt/presentation.xml" : findMainPart(zip, "presentationml");
  const presentationXml = main ? zip.readText(main) : undefined;
  if (!main || presentationXml === undefined) {
    throw new ProcessingError("This PowerPoint file has no presentation part (ppt/presentation.xml).");
  }
  const presentation = parseXml(presentationXml, main);
  const size = child(presentation, "sldSz");
  const slideArea = (Number(size?.attrs.cx) || 9_144_000) * (Number(size?.attrs.cy) || 6_858_000);
  const presRels = readRelationships(zip, main);
  const slideParts = childrenNamed(child(presentation, "sldIdLst"), "sldId")
    .map((s) => presRels.get(s.attrs["r:id"] ?? ""))
    .filter((r): r is Relationship => r !== undefined && !r.external && zip.has(r.target))
    .map((r) => r.target);
  if (slideParts.length === 0) throw new ProcessingError("This PowerPoint file has no slides.");
  const pages: ProcessedPage[] = [];
  for (const part of slideParts) {
    const rels = readRelationships(zip, part);
    const ctx: SlideContext = {
      zip,
      part,
      rels,
      layoutPositions: layoutPositions(zip, rels),
      slideArea,
      features: { pictures: 0, charts: 0, diagrams: 0, drawnShapes: 0, connectors: 0 },
    };
    const slide = parseXml(zip.readText(part) ?? "", part);
    const tree = child(child(slide, "cSld"), "spTree");
    const placed: Placed[] = [];
    if (tree) collectShapes(tree, ctx, placed);
    // ActiveX controls (embedded players) are drawn from a picture of the control.
    if (childrenNamed(child(child(slide, "cSld"), "controls"), "control").length > 0) ctx.features.pictures++;
    sortReadingOrder(placed);
    const text = placed.map((p) => p.text).join("\n").trim();
    const notes = notesText(zip, rels);
    const marked = isMarked(ctx.features);
    pages.push({
      page: pages.length + 1,
      text,
      ...(notes ? { notes } : {}),
      marked,
      image_only: marked && text === "",
    });
  }
  return Promise.resolve({ type: "pptx", page_count: pages.length, pages_estimated: false, pages });
}
