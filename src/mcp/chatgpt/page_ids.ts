/**
 * The ids and links of the ChatGPT shape's results: one page of one
 * document, `xM5gW8NZ:18`, and the console address that opens it.
 *
 * @module
 */
import type { DatabaseSync } from "node:sqlite";
import { getChunks } from "../../../projections/catalogue.ts";

/** A page of a document, as a result id names it. */
export interface PageId {
  documentId: string;
  page: number;
}

const FORM = /^([0-9A-Za-z]{1,64}):([1-9][0-9]{0,8})$/;

/** The id of a page: the document id, a colon and the page number. */
export function formatPageId(documentId: string, page: number): string {
  return `${documentId}:${page}`;
}

/** The page an id names, or null when it has not the form of one (answered as an unknown id). */
export function parsePageId(id: string): PageId | null {
  const match = FORM.exec(id.trim());
  return match ? { documentId: match[1]!, page: Number(match[2]) } : null;
}

/**
 * The console address that shows a page: the document's page with that page
 * open, for a person signed in who may see it; anyone else is sent to sign in.
 */
export function pageUrl(consoleUrl: string, page: PageId): string {
  return `${consoleUrl}/documents/${page.documentId}?page=${page.page}#page-${page.page}`;
}

/** The heading above the first piece of a page that has one (Word files), or null. */
export function pageSection(db: DatabaseSync, documentId: string, page: number): string | null {
  return sectionsByPage(db, documentId).get(page) ?? null;
}

/** The first heading of every page of a document that has one (Word files). */
export function sectionsByPage(db: DatabaseSync, documentId: string): Map<number, string> {
  const sections = new Map<number, string>();
  for (const chunk of getChunks(db, documentId)) {
    if (chunk.section && !sections.has(chunk.page)) sections.set(chunk.page, chunk.section);
  }
  return sections;
}
