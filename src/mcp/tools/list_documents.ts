/**
 * `list_documents`: the documents in the key's scope, newest first.
 *
 * @module
 */
import { type DocumentRow, listDocuments } from "../../../projections/catalogue.ts";
import { ArgumentError, type Arguments, integerArgument, stringListArgument } from "../arguments.ts";
import { documentFolder, type KeyScope, narrowToFolders } from "../scope.ts";
import { LIMITS, MESSAGES } from "../texts.ts";
import { pageCount, textResult, type Tool, type ToolContext, type ToolOutcome } from "./tool.ts";

/** One listed document, fields in the reference's order. */
interface ListedDocument {
  document_id: string;
  document: string;
  folder: string;
  type: string;
  pages?: number;
  pages_estimated?: true;
  pages_to_view: number[];
  uploaded: string;
  status?: "processing" | "not_indexed";
}

function listed(scope: KeyScope, document: DocumentRow): ListedDocument {
  const pages = pageCount(document);
  return {
    document_id: document.document_id,
    document: document.name,
    folder: documentFolder(scope, document),
    type: document.type,
    ...(pages !== null && document.status !== "processing" ? { pages } : {}),
    ...(document.pages_estimated ? { pages_estimated: true as const } : {}),
    pages_to_view: document.pages_to_view,
    uploaded: document.uploaded_at.slice(0, 10),
    ...(document.status === "searchable" ? {} : { status: document.status }),
  };
}

function run(context: ToolContext, args: Arguments): ToolOutcome {
  const folders = stringListArgument(args, "folders");
  const limit = integerArgument(args, "limit", { min: 1, max: LIMITS.listLimitMax }) ??
    LIMITS.listLimitDefault;
  const offset = integerArgument(args, "offset", { min: 0 }) ?? 0;
  const details: Record<string, unknown> = {
    folders: folders && folders.length > 0 ? folders : "whole scope",
  };
  const narrowed = narrowToFolders(context.scope, folders);
  if (!narrowed.ok) return { result: textResult(narrowed.message, true), details: { ...details, count: 0 } };
  const { total, items } = listDocuments(context.db, {
    personId: context.scope.personId,
    folderIds: narrowed.narrowed.folderIds,
    documentIds: narrowed.narrowed.documentIds,
  }, { limit, offset });
  if (total === 0) {
    return { result: textResult(MESSAGES.noDocuments), details: { ...details, count: 0, total } };
  }
  if (items.length === 0) {
    return { result: textResult(MESSAGES.nothingPast), details: { ...details, count: 0, total } };
  }
  const next = offset + items.length;
  const body = {
    total,
    ...(next < total ? { next_offset: next } : {}),
    items: items.map((document) => listed(context.scope, document)),
  };
  return { result: textResult(JSON.stringify(body)), details: { ...details, count: items.length, total } };
}

/** Arguments up to this long (as JSON) have their listing remembered while the catalogue is unchanged. */
const REMEMBERED_ARGUMENTS_CHARS = 1_000;

/** The `list_documents` tool. */
export const listDocumentsTool: Tool = {
  name: "list_documents",
  run(context, args) {
    try {
      const id = JSON.stringify(args);
      if (id.length > REMEMBERED_ARGUMENTS_CHARS) return run(context, args);
      return context.remember(`list_documents ${id}`, () => run(context, args));
    } catch (error) {
      if (error instanceof ArgumentError) {
        return {
          result: textResult(error.message, true),
          details: { folders: args.folders ?? "whole scope", count: 0 },
        };
      }
      throw error;
    }
  },
};
