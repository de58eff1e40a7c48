/**
 * What a key's ChatGPT-shaped server says about itself: the same
 * `serverInfo` as the reference's, its own instructions, and the two tools
 * `search(query)` and `fetch(id)` with titles and read-only annotations.
 *
 * @module
 */
import type { KeyTexts } from "../texts.ts";
import {
  type KeyDefinitions,
  keyDefinitions,
  type ServerInfo,
  toolAnnotations,
  type ToolDefinition,
} from "../tool_definitions.ts";
import {
  CHATGPT_ARGUMENT_TEXTS,
  CHATGPT_TITLES,
  chatgptFetchDescription,
  chatgptInstructions,
  chatgptSearchDescription,
} from "./texts.ts";

/** Builds the definitions of a key's ChatGPT-shaped server (prefer {@linkcode chatgptDefinitions}). */
export function buildChatGptDefinitions(key: KeyTexts, version: string): KeyDefinitions {
  const tools: ToolDefinition[] = [
    {
      name: "search",
      description: chatgptSearchDescription(key),
      inputSchema: {
        type: "object",
        properties: { query: { type: "string", description: CHATGPT_ARGUMENT_TEXTS.query } },
        required: ["query"],
      },
      annotations: toolAnnotations(CHATGPT_TITLES.search(key)),
    },
    {
      name: "fetch",
      description: chatgptFetchDescription(key),
      inputSchema: {
        type: "object",
        properties: { id: { type: "string", description: CHATGPT_ARGUMENT_TEXTS.id } },
        required: ["id"],
      },
      annotations: toolAnnotations(CHATGPT_TITLES.fetch(key)),
    },
  ];
  // The same serverInfo as the key's reference server: one key, one name, whatever the shape.
  const serverInfo: ServerInfo = keyDefinitions(key, version).serverInfo;
  const result = { tools };
  return {
    serverInfo,
    instructions: chatgptInstructions(key),
    tools: result,
    toolsJson: JSON.stringify(result),
  };
}

const cache = new Map<string, KeyDefinitions>();
const CACHE_SIZE = 1000;

/** The definitions of a key's ChatGPT-shaped server, built once per distinct set of texts. */
export function chatgptDefinitions(key: KeyTexts, version: string): KeyDefinitions {
  const id = JSON.stringify([key.name, key.description, key.folderNames, version]);
  const hit = cache.get(id);
  if (hit) return hit;
  const built = buildChatGptDefinitions(key, version);
  if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!);
  cache.set(id, built);
  return built;
}
