/**
 * `view_page`: one page as a PNG picture or a one-page PDF, drawn from the
 * document's PDF (its original, or the PDF copy of an Office file).
 *
 * @module
 */
import { encodeBase64 } from "../../render/base64.ts";
import { type DocumentRow, getDocument } from "../../../projections/catalogue.ts";
import {
  ArgumentError,
  type Arguments,
  choiceArgument,
  documentIdArgument,
  integerArgument,
} from "../arguments.ts";
import { inScope } from "../scope.ts";
import { MESSAGES } from "../texts.ts";
import { textResult, type Tool, type ToolContext, type ToolOutcome } from "./tool.ts";

/** Where a document's pages can be drawn from, or why they cannot. */
export function pageSource(
  document: DocumentRow,
): { ok: true; sha256: string; pages: number } | { ok: false; message: string } {
  if (document.type === "pdf") {
    if (document.page_count === null) {
      return document.status === "processing"
        ? { ok: false, message: MESSAGES.stillProcessing }
        : { ok: false, message: MESSAGES.noPageView };
    }
    return { ok: true, sha256: document.sha256, pages: document.page_count };
  }
  if (document.pdf_copy_status === "made" && document.pdf_copy_sha256 && document.pdf_copy_pages) {
    return { ok: true, sha256: document.pdf_copy_sha256, pages: document.pdf_copy_pages };
  }
  if (document.pdf_copy_status === "pending") return { ok: false, message: MESSAGES.pdfCopyPending };
  return { ok: false, message: MESSAGES.noPageView };
}

async function run(context: ToolContext, args: Arguments): Promise<ToolOutcome> {
  const documentId = documentIdArgument(args);
  const page = integerArgument(args, "page", { min: 1 });
  if (page === undefined) throw new ArgumentError("`page` is required — a whole number, 1 or more.");
  const format = choiceArgument(args, "format", ["image", "pdf"] as const) ?? "image";
  const document = getDocument(context.db, documentId);
  if (!inScope(context.scope, document)) {
    return {
      result: textResult(MESSAGES.notFound, true),
      details: { document_id: documentId, page, format },
    };
  }
  const details = { document_id: documentId, file: document.name, sha256: document.sha256, page, format };
  const source = pageSource(document);
  if (!source.ok) return { result: textResult(source.message, true), details };
  if (page > source.pages) return { result: textResult(MESSAGES.pageCount(source.pages), true), details };
  if (!context.pageViews) return { result: textResult(MESSAGES.noPageView, true), details };
  let bytes: Uint8Array;
  try {
    bytes = await context.pageViews.view(source.sha256, page, format);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { result: textResult(MESSAGES.pageNotDrawn(reason), true), details };
  }
  const caption = { type: "text" as const, text: MESSAGES.viewCaption(document.name, page, source.pages) };
  const data = encodeBase64(bytes);
  const block = format === "image" ? { type: "image" as const, mimeType: "image/png", data } : {
    type: "resource" as const,
    resource: {
      uri: `sergo://documents/${document.document_id}/pages/${page}.pdf`,
      mimeType: "application/pdf",
      blob: data,
    },
  };
  return { result: { content: [caption, block], isError: false }, details };
}

/** The `view_page` tool. */
export const viewPageTool: Tool = {
  name: "view_page",
  async run(context, args) {
    try {
      return await run(context, args);
    } catch (error) {
      if (error instanceof ArgumentError) {
        return {
          result: textResult(error.message, true),
          details: {
            document_id: args.document_id ?? null,
            page: args.page ?? null,
            format: args.format ?? "image",
          },
        };
      }
      throw error;
    }
  },
};
