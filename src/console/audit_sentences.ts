/**
 * The audit page's sentences: each entry as people read it, in the words of
 * the reference's audit table ("mcp search — 'electric vehicles in China',
 * 4 results", "mcp text read — deck.pptx, pages 17-18"), and whether it was an
 * error, with the reason.
 *
 * @module
 */
import type { AuditEntry } from "../../projections/audit_view.ts";

const text = (value: unknown): string | null =>
  typeof value === "string" && value !== "" ? value : typeof value === "number" ? String(value) : null;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The part of a sentence after the action, from an entry's details. */
function particulars(action: string, d: Record<string, unknown>): string[] {
  const file = text(d.file) ?? text(d.document_id);
  switch (action) {
    case "mcp search":
    case "console search": {
      const parts = [`'${text(d.query) ?? ""}'`];
      if (typeof d.results === "number") parts.push(plural(d.results, "result"));
      if (typeof d.offset === "number" && d.offset > 0) parts.push(`from result ${d.offset + 1}`);
      if (text(d.as_key)) parts.push(`as the key ${d.as_key}`);
      return parts;
    }
    case "mcp listing": {
      const folders = Array.isArray(d.folders) ? d.folders.join(", ") : text(d.folders) ?? "whole scope";
      const parts = [folders];
      if (typeof d.count === "number") parts.push(plural(d.count, "document"));
      return parts;
    }
    case "mcp text read": {
      const parts = [file ?? "a document"];
      if (typeof d.page === "number") parts.push(`page ${d.page}`);
      else if (text(d.pages)) parts.push(String(d.pages));
      return parts;
    }
    case "mcp page viewed": {
      const parts = [file ?? "a document"];
      if (typeof d.page === "number") parts.push(`page ${d.page}`);
      if (text(d.format)) parts.push(String(d.format));
      return parts;
    }
    case "document uploaded":
      return [
        file ?? "",
        ...(text(d.folder) ? [`into ${d.folder}`] : []),
        ...(text(d.preset) ? [`${d.preset}`] : []),
      ]
        .filter(Boolean);
    case "document processed":
      return [
        file ?? "",
        typeof d.page_count === "number" ? plural(d.page_count, "page") : "",
        Array.isArray(d.pages_to_view) && d.pages_to_view.length > 0
          ? `pages to view ${d.pages_to_view.join(", ")}`
          : "",
      ].filter(Boolean);
    case "processing failed":
    case "pdf copy failed":
      return [file ?? "", text(d.reason) ?? ""].filter(Boolean);
    case "folder created":
    case "folder deleted":
      return [text(d.folder) ?? ""].filter(Boolean);
    case "folder renamed":
    case "folder moved":
      return [[text(d.from), text(d.to)].filter(Boolean).join(" → ") || (text(d.folder) ?? "")].filter(
        Boolean,
      );
    case "key created":
    case "key changed":
    case "key rolled":
    case "key deleted":
    case "personal key created":
    case "personal key deleted":
      return [text(d.key) ?? text(d.name) ?? "", text(d.masked_key) ?? ""].filter(Boolean);
    case "person added":
      return [`${text(d.name) ?? ""} <${text(d.email) ?? ""}>`];
    default:
      return file ? [file] : [];
  }
}

/** An entry as one sentence. */
export function auditSentence(entry: Pick<AuditEntry, "action" | "details">): string {
  const parts = particulars(entry.action, entry.details).filter((part) => part !== "");
  // A call through the ChatGPT-shaped server (`/chatgpt/mcp`) says so: its `fetch` reads a whole document.
  if (entry.details.shape === "chatgpt") {
    parts.push(`through ChatGPT's ${text(entry.details.tool) ?? "tools"}`);
  }
  return parts.length === 0 ? entry.action : `${entry.action} — ${parts.join(", ")}`;
}

/** Whether the entry records an error, and why (the tool's refusal or failure), or null. */
export function auditError(entry: Pick<AuditEntry, "action" | "details">): { reason: string } | null {
  const d = entry.details;
  const failed = d.is_error === true || entry.action === "processing failed" ||
    entry.action === "pdf copy failed";
  if (!failed) return null;
  return {
    reason: text(d.error) ?? text(d.failure) ?? text(d.refused) ?? text(d.reason) ?? text(d.message) ?? "",
  };
}
