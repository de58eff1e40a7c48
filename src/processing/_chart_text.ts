/**
 * The text of a DrawingML chart part: title, axis titles, series names, category labels
 * and values, one series per line.
 *
 * @module
 */
import { child, childrenNamed, descendants, parseXml, textContent, type XNode } from "./_xml.ts";

function cachedValues(ref: XNode | undefined): string[] {
  if (!ref) return [];
  const values: string[] = [];
  for (const pt of descendants(ref, "pt")) {
    const v = child(pt, "v");
    if (v) values.push(textContent(v).trim());
  }
  if (values.length === 0) {
    const v = child(ref, "v");
    if (v) values.push(textContent(v).trim());
  }
  return values;
}

function richText(node: XNode | undefined): string {
  if (!node) return "";
  const runs = descendants(node, "t").map((t) => textContent(t));
  if (runs.length > 0) return runs.join("").trim();
  return cachedValues(child(node, "strRef") ?? node).join(" ").trim();
}

function formatValue(v: string): string {
  const n = Number(v);
  if (v === "" || !Number.isFinite(n)) return v;
  return String(Math.round(n * 1e6) / 1e6);
}

/** Reads a chart part's text; an unreadable chart yields an empty string. */
export function chartText(xml: string, partName: string): string {
  const root = parseXml(xml, partName);
  const chart = child(root, "chart");
  if (!chart) return "";
  const lines: string[] = [];
  const title = richText(child(chart, "title"));
  if (title) lines.push(title);
  const plot = child(chart, "plotArea");
  if (!plot) return lines.join("\n");
  for (const axis of plot.children) {
    if (!/Ax$/.test(axis.name)) continue;
    const axisTitle = richText(child(axis, "title"));
    if (axisTitle) lines.push(axisTitle);
  }
  for (const group of plot.children) {
    for (const ser of childrenNamed(group, "ser")) {
      const name = richText(child(ser, "tx"));
      const cats = cachedValues(child(ser, "cat") ?? child(ser, "xVal"));
      const vals = cachedValues(child(ser, "val") ?? child(ser, "yVal")).map(formatValue);
      const pairs = vals.map((v, i) => (cats[i] ? `${cats[i]}: ${v}` : v));
      if (pairs.length === 0 && cats.length > 0) pairs.push(...cats);
      lines.push(name ? `${name} — ${pairs.join(", ")}` : pairs.join(", "));
    }
  }
  return lines.filter((l) => l.trim()).join("\n");
}
