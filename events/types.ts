/**
 * Every event Sergo records, as one discriminated union.
 *
 * Each event type has a zod schema for its `data` and a schema version. Data
 * that does not match is refused at append; a stored event that does not parse
 * is reported with its position on read.
 *
 * @module
 */
import { z } from "zod";
import { MAX_EVENT_DEPTH, nestsDeeperThan } from "./json_depth.ts";

const id = z.string().min(1).max(64);
const name200 = z.string().min(1).max(200);
const sha256 = z.string().regex(/^[0-9a-f]{64}$/, "Expected a sha256 hex digest");
const isoTime = z.string().datetime({ offset: true });

/** The processing presets a document can be read with. */
export const PRESETS = ["basic", "standard", "none"] as const;
/** A processing preset. */
export type Preset = (typeof PRESETS)[number];

/** The document types Sergo reads, decided by content. */
export const DOCUMENT_TYPES = ["pdf", "pptx", "docx", "txt", "md"] as const;
/** A document type. */
export type DocumentType = (typeof DOCUMENT_TYPES)[number];

/** What an agent key can read: whole folders (with everything inside) and single documents. */
export const canReadSchema = z.object({
  folders: z.array(id).max(1000),
  documents: z.array(id).max(1000),
});
/** What an agent key can read. */
export type CanRead = z.infer<typeof canReadSchema>;

/** One chunk of a page: Word files carry their heading as `section`. */
export const chunkSchema = z.object({
  section: z.string().max(2000).nullable(),
  text: z.string(),
});

/** One page of a processing result. */
export const processedPageSchema = z.object({
  /** 1-based page number (estimated for Word and text until a PDF copy exists). */
  page: z.number().int().min(1),
  /** The page's text as read; for Word files the chunks joined by blank lines. */
  text: z.string(),
  /** Chunks with their section headings (Word); absent means the page is one chunk. */
  chunks: z.array(chunkSchema).optional(),
  /** Speaker notes (PowerPoint): searchable, kept apart from the slide text. */
  notes: z.string().optional(),
  /** The page's text may miss a figure, chart or table. */
  marked: z.boolean(),
  /** Marked and without any text. */
  image_only: z.boolean(),
  /**
   * Standard preset: the page's text came from a transcriber (its text layer was
   * missing, tiny or garbage), or the transcriber failed on it (`error`; the page
   * keeps what Basic read). Absent where the text layer was kept.
   */
  transcription: z.object({
    engine: z.string().min(1).max(200),
    version: z.string().min(1).max(100),
    /** Why the page was transcribed. */
    because: z.enum(["missing", "tiny", "garbage"]),
    /** Tesseract: the languages it was read with, the script OSD found, degrees it was turned. */
    languages: z.string().max(200).optional(),
    script: z.string().max(100).optional(),
    rotated: z.number().int().optional(),
    error: z.string().max(1000).optional(),
  }).optional(),
});
/** One page of a processing result. */
export type ProcessedPage = z.infer<typeof processedPageSchema>;

const schemas = {
  PersonAdded: z.object({ person_id: id, name: name200, email: z.string().email().max(320) }),
  PersonPasswordSet: z.object({ person_id: id, password_hash: z.string().min(1).max(500) }),
  /** The person may add people and reset their passwords in the console (the first person is one). */
  PersonMadeAdministrator: z.object({ person_id: id }),
  /** The person is no longer an administrator; their console sessions end with it. */
  PersonAdministratorRemoved: z.object({ person_id: id }),
  /**
   * An administrator made a one-time link that sets a person's password: for a
   * new person (`invite`) or a forgotten password (`reset`). Kept as the sha256 of its token.
   */
  PasswordLinkIssued: z.object({
    link_id: id,
    person_id: id,
    token_hash: sha256,
    purpose: z.enum(["invite", "reset"]),
    expires_at: isoTime,
  }),
  /** A password link was used (its person set a password) or replaced by a newer one. */
  PasswordLinkUsed: z.object({ link_id: id }),

  FolderCreated: z.object({ folder_id: id, person_id: id, parent_id: id.nullable(), name: name200 }),
  FolderRenamed: z.object({ folder_id: id, name: name200 }),
  FolderMoved: z.object({ folder_id: id, parent_id: id.nullable() }),
  FolderDeleted: z.object({ folder_id: id }),

  DocumentUploaded: z.object({
    document_id: id,
    person_id: id,
    folder_id: id.nullable(),
    name: z.string().min(1).max(255),
    type: z.enum(DOCUMENT_TYPES),
    size: z.number().int().min(0),
    sha256,
    preset: z.enum(PRESETS),
  }),
  DocumentMoved: z.object({ document_id: id, folder_id: id.nullable() }),
  DocumentDeleted: z.object({ document_id: id }),

  ProcessingRequested: z.object({ document_id: id, preset: z.enum(PRESETS) }),
  ProcessingStarted: z.object({
    document_id: id,
    preset: z.enum(PRESETS),
    /** Who is processing: `serve`, or `cli-<pid>` for a command run by hand. */
    worker: z.string().max(100).optional(),
    /** Until when others leave the document to that worker. */
    lease_until: isoTime.optional(),
  }),
  /**
   * The worker holding a document's processing lease is still at it: others
   * keep away until the new `lease_until` (appended at the stream's version
   * the worker knows, so a lease taken over meanwhile is not renewed).
   */
  ProcessingLeaseRenewed: z.object({
    document_id: id,
    worker: z.string().min(1).max(100),
    lease_until: isoTime,
  }),
  DocumentProcessed: z.object({
    document_id: id,
    preset: z.enum(PRESETS),
    page_count: z.number().int().min(0),
    pages_estimated: z.boolean(),
    pages: z.array(processedPageSchema),
    /**
     * Read, but with no text to search (every page image-only under Basic): the
     * document is not_indexed with this reason, which says what would read it.
     */
    not_indexed_reason: z.string().min(1).max(1000).optional(),
    /**
     * Searchable, but Standard's budget (pages or time per document) left some
     * pages untranscribed: the sentence the person sees, naming those pages.
     */
    incomplete_reason: z.string().min(1).max(1000).optional(),
  }),
  /** Standard preset: how many of the pages to transcribe are done, while it works. */
  TranscriptionProgressed: z.object({
    document_id: id,
    pages_done: z.number().int().min(0),
    pages_total: z.number().int().min(1),
  }),
  ProcessingFailed: z.object({
    document_id: id,
    preset: z.enum(PRESETS),
    reason: z.string().min(1).max(1000),
  }),

  PdfCopyRequested: z.object({ document_id: id }),
  /** A worker took a pending PDF copy: others leave it alone until `lease_until` (renewed while it works). */
  PdfCopyStarted: z.object({ document_id: id, worker: z.string().min(1).max(100), lease_until: isoTime }),
  /** The worker making a PDF copy is still at it, until the new `lease_until`. */
  PdfCopyLeaseRenewed: z.object({
    document_id: id,
    worker: z.string().min(1).max(100),
    lease_until: isoTime,
  }),
  PdfCopyMade: z.object({
    document_id: id,
    sha256,
    page_count: z.number().int().min(1),
    /**
     * Word and text files in logs from before copies were read page by page: the real page of
     * each chunk, in reading order. A copy now comes with a `DocumentProcessed` holding the
     * copy's pages instead.
     */
    chunk_pages: z.array(z.number().int().min(1)).optional(),
  }),
  PdfCopyFailed: z.object({ document_id: id, reason: z.string().min(1).max(1000) }),

  /**
   * The vectors of a document's passages, computed by an embedding model
   * after processing, so that replay never calls the model. `vectors` is
   * base64 of `passages` × `dimensions` signed bytes, in passage order, each
   * vector scaled so its largest component is ±127; `text_sha256` is over the
   * texts that were embedded (see `passageInputs` in `projections/search_vectors.ts`): a document whose
   * passages have changed since gets none of them.
   */
  PassagesEmbedded: z.object({
    document_id: id,
    /** Which model made the vectors: search compares vectors of one model only. */
    model: z.string().min(1).max(300),
    dimensions: z.number().int().min(1).max(8192),
    passages: z.number().int().min(0).max(1_000_000),
    text_sha256: sha256,
    vectors: z.string().max(200_000_000).regex(/^[A-Za-z0-9+/]*={0,2}$/, "Expected base64"),
  }),

  AgentKeyCreated: z.object({
    key_id: id,
    person_id: id,
    name: z.string().min(2).max(32),
    description: z.string().max(1000),
    key_hash: sha256,
    last4: z.string().length(4),
    can_read: canReadSchema,
  }),
  AgentKeyChanged: z.object({
    key_id: id,
    name: z.string().min(2).max(32).optional(),
    description: z.string().max(1000).optional(),
    can_read: canReadSchema.optional(),
  }),
  AgentKeyRolled: z.object({
    key_id: id,
    key_hash: sha256,
    last4: z.string().length(4),
    /** Until when the value that was current before this roll keeps working. */
    old_expires_at: isoTime,
  }),
  AgentKeyDeleted: z.object({ key_id: id }),

  PersonalKeyCreated: z.object({ key_id: id, person_id: id, key_hash: sha256, last4: z.string().length(4) }),
  PersonalKeyDeleted: z.object({ key_id: id }),

  LoginTokenIssued: z.object({ token_id: id, person_id: id, token_hash: sha256, expires_at: isoTime }),
  LoginTokenRevoked: z.object({ token_id: id }),

  /** A connector app registered itself (RFC 7591); apps with a metadata document URL are not registered. */
  OAuthClientRegistered: z.object({
    client_id: id,
    client_name: name200,
    redirect_uris: z.array(z.string().min(1).max(2000)).min(1).max(10),
  }),
  /**
   * A person let an app act as one of their agent keys. The authorization code
   * is kept as its sha256 with its PKCE challenge; it works once, until `code_expires_at`.
   */
  OAuthGranted: z.object({
    grant_id: id,
    key_id: id,
    person_id: id,
    /** The registered client's id, or the URL of its metadata document. */
    client_id: z.string().min(1).max(2000),
    client_name: name200,
    /** The URL of the client's metadata document, when it has one. */
    metadata_url: z.string().max(2000).nullable(),
    redirect_uri: z.string().min(1).max(2000),
    /** The MCP endpoint the tokens are for (RFC 8707). */
    resource: z.string().min(1).max(2000),
    code_hash: sha256,
    code_challenge: z.string().min(43).max(128),
    code_expires_at: isoTime,
  }),
  /** Tokens issued for a grant, for its code or a refresh token; only their sha256 is kept. */
  OAuthTokensIssued: z.object({
    grant_id: id,
    grant_type: z.enum(["authorization_code", "refresh_token"]),
    access_hash: sha256,
    access_expires_at: isoTime,
    refresh_hash: sha256,
    refresh_expires_at: isoTime,
  }),
  /** A grant ended: its tokens stop working at once. */
  OAuthGrantRevoked: z.object({
    grant_id: id,
    /** `revoked` (by the person, or by the app through the revocation endpoint), `code_reused`, `refresh_reused`. */
    reason: z.enum(["revoked", "code_reused", "refresh_reused"]),
  }),

  /**
   * A person searched their documents in the console (as they are, or as one of
   * their keys sees them): audited as the person, with the pages it showed.
   */
  ConsoleSearched: z.object({
    person_id: id,
    query: z.string().max(2000),
    results: z.number().int().min(0),
    as_key_id: id.nullable(),
    as_key_name: z.string().max(64).nullable(),
    hits: z.array(z.object({ document_id: id, page: z.number().int().min(1).nullable() })).max(50),
  }),

  McpCalled: z.object({
    key_id: id,
    person_id: id,
    key_name: z.string(),
    masked_key: z.string(),
    end_user: z.string().max(200).nullable(),
    tool: z.string().max(200),
    arguments: z.record(z.string(), z.unknown()),
    /** The audit summary the reference names, such as `mcp search`. */
    action: z.string(),
    /** The details of the action: query, count, offset, file, page, format, folders. */
    details: z.record(z.string(), z.unknown()),
    is_error: z.boolean(),
    duration_ms: z.number().min(0),
    /**
     * The server shape that answered when it was not the reference's `/mcp`:
     * `chatgpt` for `/chatgpt/mcp`. Absent on every entry of the reference's
     * shape (and on all entries written before shapes existed).
     */
    shape: z.enum(["chatgpt"]).optional(),
  }),
} as const;

/** Every event type's schema, by type. */
export const EVENT_SCHEMAS: {
  readonly [K in keyof typeof schemas]: z.ZodType<z.infer<(typeof schemas)[K]>>;
} = schemas;

/** Schema version of each event type; raise one when its data changes shape. */
export const EVENT_VERSIONS: { readonly [K in EventType]: number } = {
  PersonAdded: 1,
  PersonPasswordSet: 1,
  PersonMadeAdministrator: 1,
  PersonAdministratorRemoved: 1,
  PasswordLinkIssued: 1,
  PasswordLinkUsed: 1,
  FolderCreated: 1,
  FolderRenamed: 1,
  FolderMoved: 1,
  FolderDeleted: 1,
  DocumentUploaded: 1,
  DocumentMoved: 1,
  DocumentDeleted: 1,
  ProcessingRequested: 1,
  ProcessingStarted: 1,
  ProcessingLeaseRenewed: 1,
  DocumentProcessed: 1,
  TranscriptionProgressed: 1,
  ProcessingFailed: 1,
  PdfCopyRequested: 1,
  PdfCopyStarted: 1,
  PdfCopyLeaseRenewed: 1,
  PdfCopyMade: 1,
  PdfCopyFailed: 1,
  PassagesEmbedded: 1,
  AgentKeyCreated: 1,
  AgentKeyChanged: 1,
  AgentKeyRolled: 1,
  AgentKeyDeleted: 1,
  PersonalKeyCreated: 1,
  PersonalKeyDeleted: 1,
  LoginTokenIssued: 1,
  LoginTokenRevoked: 1,
  OAuthClientRegistered: 1,
  OAuthGranted: 1,
  OAuthTokensIssued: 1,
  OAuthGrantRevoked: 1,
  McpCalled: 1,
  ConsoleSearched: 1,
};

/** The name of an event type. */
export type EventType = keyof typeof schemas;

/** The data of one event type. */
export type EventData<T extends EventType> = z.infer<(typeof schemas)[T]>;

/** Who and what caused an event. */
export interface EventMetadata {
  /** When the command was decided (ISO 8601). */
  time: string;
  /** Who did it: `person-…`, `key-…`, `system`, `cli`. */
  actor?: string;
  /** The `X-Sergo-End-User` value of the request, if any. */
  end_user?: string;
  request_id?: string;
  causation_id?: string;
  correlation_id?: string;
}

/** An event before it is recorded. */
export type SergoEvent = {
  [T in EventType]: { type: T; data: EventData<T>; metadata: EventMetadata };
}[EventType];

/** An event of one type. */
export type EventOf<T extends EventType> = Extract<SergoEvent, { type: T }>;

/** An event as stored in the log. */
export type RecordedEvent = SergoEvent & {
  /** Global position, from 1, contiguous. */
  position: number;
  /** Stream name, `kind-id`. */
  stream: string;
  /** Version of the event within its stream, from 1. */
  stream_version: number;
  /** Schema version of the event's data. */
  schema_version: number;
  /** Hash of the event before it (64 zeros for the first). */
  prev_hash: string;
  /** sha256(prev_hash ‖ canonical JSON of the event). */
  hash: string;
};

/** A recorded event of one type. */
export type RecordedOf<T extends EventType> = Extract<RecordedEvent, { type: T }>;

/** Whether a string names an event type. */
export function isEventType(type: string): type is EventType {
  return Object.hasOwn(schemas, type);
}

/** The error raised when an event's data does not match its schema. */
export class EventSchemaError extends Error {
  override name = "EventSchemaError";
}

/**
 * Validates one event's data against its type's schema and returns it parsed;
 * data nested deeper than {@linkcode MAX_EVENT_DEPTH} levels is refused first.
 */
export function validateEvent(event: { type: string; data: unknown; metadata: EventMetadata }): SergoEvent {
  if (!isEventType(event.type)) {
    throw new EventSchemaError(`Unknown event type "${event.type}"`);
  }
  if (nestsDeeperThan(event.data, MAX_EVENT_DEPTH) || nestsDeeperThan(event.metadata, MAX_EVENT_DEPTH)) {
    throw new EventSchemaError(
      `Cannot record "${event.type}": it nests deeper than ${MAX_EVENT_DEPTH} levels`,
    );
  }
  const result = schemas[event.type].safeParse(event.data);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue?.path.length ? issue.path.join(".") : "data";
    throw new EventSchemaError(
      `Cannot record "${event.type}": ${where} is invalid: ${issue?.message ?? "does not match its schema"}`,
    );
  }
  return { type: event.type, data: result.data, metadata: event.metadata } as SergoEvent;
}
