/**
 * What a key's server says about itself: `serverInfo`, the instructions and
 * the four tools with their descriptions and input schemas, built from the
 * key's texts once and kept, so `tools/list` is the same bytes for an
 * unchanged key across requests and restarts.
 *
 * @module
 */
import {
  ARGUMENT_TEXTS,
  foldersArgumentDescription,
  instructions,
  type KeyTexts,
  LIMITS,
  listDocumentsDescription,
  readDocumentDescription,
  searchDescription,
  TOOL_TITLES,
  viewPageDescription,
} from "./texts.ts";

/** One tool as `tools/list` sends it, fields in the reference's order. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: ToolAnnotations;
}

/**
 * A tool's annotations: read-only and closed-world, and a title where one is
 * sent. Not covered by a client's trust digest of a tool (seri's covers the
 * name, description and input schema), so adding a title keeps a trusted
 * server trusted.
 */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint: true;
  openWorldHint: false;
}

/** How the reference's definitions are built. */
export interface DefinitionOptions {
  /**
   * Adds `annotations.title` to each tool (`SERGO_MCP_TOOL_TITLES`). Off by
   * default: the reference's `tools/list` has no title, and it wins.
   */
  toolTitles?: boolean;
}

/** `serverInfo`, fields in the reference's order. */
export interface ServerInfo {
  description?: string;
  name: string;
  title: string;
  version: string;
}

/** Everything a key's server says about itself. */
export interface KeyDefinitions {
  serverInfo: ServerInfo;
  instructions: string;
  /** The `tools/list` result. */
  tools: { tools: ToolDefinition[] };
  /** The `tools/list` result as JSON, built once. */
  toolsJson: string;
}

const ANNOTATIONS = { readOnlyHint: true, openWorldHint: false } as const;

/** The annotations of a tool, with `title` first when it is sent. */
export function toolAnnotations(title: string | null): ToolAnnotations {
  return title === null ? ANNOTATIONS : { title, ...ANNOTATIONS };
}

function foldersSchema(key: KeyTexts, verb: "search" | "list"): Record<string, unknown> {
  return { type: "array", items: { type: "string" }, description: foldersArgumentDescription(key, verb) };
}

/** Builds the definitions of a key's server (prefer {@linkcode keyDefinitions}, which keeps them). */
export function buildKeyDefinitions(
  key: KeyTexts,
  version: string,
  options: DefinitionOptions = {},
): KeyDefinitions {
  const title = (tool: keyof typeof TOOL_TITLES) =>
    toolAnnotations(options.toolTitles ? TOOL_TITLES[tool](key) : null);
  const tools: ToolDefinition[] = [
    {
      name: "search",
      description: searchDescription(key),
      inputSchema: {
        type: "object",
        properties: {
          query: { type: "string", description: ARGUMENT_TEXTS.query },
          limit: {
            type: "integer",
            minimum: 1,
            maximum: LIMITS.searchLimitMax,
            default: LIMITS.searchLimitDefault,
            description: ARGUMENT_TEXTS.searchLimit,
          },
          offset: {
            type: "integer",
            minimum: 0,
            maximum: LIMITS.searchOffsetMax,
            default: 0,
            description: ARGUMENT_TEXTS.searchOffset,
          },
          folders: foldersSchema(key, "search"),
        },
        required: ["query"],
      },
      annotations: title("search"),
    },
    {
      name: "list_documents",
      description: listDocumentsDescription(key),
      inputSchema: {
        type: "object",
        properties: {
          folders: foldersSchema(key, "list"),
          limit: {
            type: "integer",
            minimum: 1,
            maximum: LIMITS.listLimitMax,
            default: LIMITS.listLimitDefault,
          },
          offset: { type: "integer", minimum: 0, default: 0, description: ARGUMENT_TEXTS.listOffset },
        },
      },
      annotations: title("list_documents"),
    },
    {
      name: "read_document",
      description: readDocumentDescription(key),
      inputSchema: {
        type: "object",
        properties: {
          document_id: { type: "string", description: ARGUMENT_TEXTS.readDocumentId },
          page: { type: "integer", minimum: 1, description: ARGUMENT_TEXTS.readPage },
          to_page: { type: "integer", minimum: 1, description: ARGUMENT_TEXTS.readToPage },
        },
        required: ["document_id"],
      },
      annotations: title("read_document"),
    },
    {
      name: "view_page",
      description: viewPageDescription(key),
      inputSchema: {
        type: "object",
        properties: {
          document_id: { type: "string", description: ARGUMENT_TEXTS.viewDocumentId },
          page: { type: "integer", minimum: 1, description: ARGUMENT_TEXTS.viewPage },
          format: {
            type: "string",
            enum: ["image", "pdf"],
            default: "image",
            description: ARGUMENT_TEXTS.viewFormat,
          },
        },
        required: ["document_id", "page"],
      },
      annotations: title("view_page"),
    },
  ];
  const serverInfo: ServerInfo = {
    ...(key.description !== "" ? { description: key.description } : {}),
    name: key.name,
    title: key.name,
    version,
  };
  const result = { tools };
  return { serverInfo, instructions: instructions(key), tools: result, toolsJson: JSON.stringify(result) };
}

const cache = new Map<string, KeyDefinitions>();
const CACHE_SIZE = 1000;

/** The definitions of a key's server, built once per distinct set of texts. */
export function keyDefinitions(
  key: KeyTexts,
  version: string,
  options: DefinitionOptions = {},
): KeyDefinitions {
  const id = JSON.stringify([
    key.name,
    key.description,
    key.folderNames,
    version,
    options.toolTitles === true,
  ]);
  const hit = cache.get(id);
  if (hit) return hit;
  const built = buildKeyDefinitions(key, version, options);
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(id, built);
  return built;
}
