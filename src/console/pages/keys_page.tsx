/** @jsxImportSource preact */
/**
 * Agent keys: the list, the form to create one (its value shown once, with
 * the connection snippets), and each key's page to edit, roll or delete it.
 *
 * @module
 */
import type { VNode } from "preact";
import type { Folder } from "../../../projections/catalogue.ts";
import type { AgentKey, OldValue } from "../../../projections/key_scopes.ts";
import type { OAuthGrant } from "../../../projections/oauth_grants.ts";
import { FolderChecks } from "./folder_tree.tsx";
import { KeyApps } from "./key_apps.tsx";
import { Alert, Layout, type PageContext, Time } from "./layout.tsx";

/** A document a key can be given, with its folder. */
export interface PickableDocument {
  id: string;
  name: string;
  folder_id: string | null;
}

/** What a key reads, as names. */
export interface CanReadLabels {
  folders: string[];
  documents: string[];
}

/** An agent key as the pages show it. */
export interface KeyView {
  key: AgentKey;
  masked: string;
  canRead: CanReadLabels;
  oldValues: Array<OldValue & { masked: string }>;
  usage?: KeyUsage;
}

/** A key's use, from its audit entries. */
export interface KeyUsage {
  lastUsed: string | null;
  /** Calls in the last 24 hours and the last 30 days. */
  day: number;
  month: number;
  /** The end users its calls named in the last 30 days, most calls first (at most 6). */
  endUsers: Array<{ end_user: string; calls: number }>;
}

/** A key's use in one line: last used, calls, end users. */
export function KeyUsageLine({ usage }: { usage?: KeyUsage }): VNode | null {
  if (!usage) return null;
  return (
    <p class="usage small" data-usage>
      {usage.lastUsed
        ? (
          <>
            Last used <Time iso={usage.lastUsed} /> · <span data-calls-day>{usage.day}</span>{" "}
            {usage.day === 1 ? "call" : "calls"} in 24 h · <span data-calls-month>{usage.month}</span>{" "}
            {usage.month === 1 ? "call" : "calls"} in 30 days
            {usage.endUsers.length > 0 && (
              <>
                {" "}· end users:{" "}
                <span data-end-users>
                  {usage.endUsers.map((u) => `${u.end_user} (${u.calls})`).join(", ")}
                </span>
              </>
            )}
          </>
        )
        : "Not used yet: no agent has called it."}
    </p>
  );
}

/** Options of {@linkcode KeysPage}. */
export interface KeysPageProps {
  context: PageContext;
  keys: readonly KeyView[];
  folders: readonly Folder[];
  documents: readonly PickableDocument[];
  rootLabel: string;
  publicUrl: string;
  /** Whether connector apps can sign in with OAuth (`SERGO_OAUTH`); default on. */
  oauth?: boolean;
  /** Absolute paths for the stdio snippet; absent when the data is not on this machine (PostgreSQL). */
  stdio?: StdioPaths;
}

/** The absolute paths the stdio snippet names, so it works from any folder. */
export interface StdioPaths {
  deno: string;
  config: string;
  main: string;
  data: string;
}

/** The rules of a key name, as the form states them. */
const NAME_RULE = "2 to 32 characters: lowercase letters a-z, digits 0-9 and -, starting with a letter";

function KeyFields(
  props: {
    name: string;
    description: string;
    folders: readonly Folder[];
    documents: readonly PickableDocument[];
    checkedFolders: readonly string[];
    checkedDocuments: readonly string[];
    rootLabel: string;
    idPrefix: string;
  },
): VNode {
  const p = props.idPrefix;
  return (
    <div class="stack">
      <label for={`${p}-name`}>Name</label>
      <input
        id={`${p}-name`}
        name="name"
        value={props.name}
        required
        autocomplete="off"
        spellcheck={false}
        data-rule="key-name"
        aria-describedby={`${p}-name-rule ${p}-name-check`}
        placeholder="energy-outlooks"
      />
      <p class="hint" id={`${p}-name-rule`}>
        {NAME_RULE}. Apps show it in front of each tool, such as <code>mcp__energy-outlooks__search</code>.
      </p>
      <p class="field-check" id={`${p}-name-check`} aria-live="polite"></p>
      <label for={`${p}-description`}>Description</label>
      <textarea
        id={`${p}-description`}
        name="description"
        rows={3}
        data-rule="description"
        data-counter={`${p}-description-count`}
        placeholder="What the agent finds here — the MCP server tells the model this."
      >
        {props.description}
      </textarea>
      <p class="hint counter" id={`${p}-description-count`} aria-live="polite">
        {props.description.length} / 1,000
      </p>
      <FolderChecks
        folders={props.folders}
        documents={props.documents}
        checkedFolders={props.checkedFolders}
        checkedDocuments={props.checkedDocuments}
        rootLabel={props.rootLabel}
      />
    </div>
  );
}

/** The panel that shows a new key value once, with the connection snippets (snippets.js). */
export function SecretPanel(
  { id, publicUrl, agent, oauth = true, stdio }: {
    id: string;
    publicUrl: string;
    agent: boolean;
    oauth?: boolean;
    stdio?: StdioPaths;
  },
): VNode {
  return (
    <section
      class="secret card"
      id={id}
      hidden
      data-public-url={publicUrl}
      data-oauth={oauth ? "on" : "off"}
      data-stdio={stdio ? JSON.stringify(stdio) : undefined}
      tabindex={-1}
      aria-live="polite"
    >
      <h2 data-slot="title">Your new key</h2>
      <p class="warning">
        Copy it now: this is the only time Sergo shows it. Only its fingerprint is stored.
      </p>
      <div class="copy-row">
        <code class="secret-value" data-slot="value"></code>
        <button type="button" data-copy="value">Copy key</button>
      </div>
      <p class="notice" data-slot="note" hidden></p>
      {agent && (
        <div class="snippets">
          <h3>Connect an app</h3>
          <p class="hint">
            Streamable HTTP at <code>/mcp</code> is preferred; <code>/sse</code>{" "}
            is for apps that have only the older SSE transport.
          </p>
          <div data-slot="snippets"></div>
        </div>
      )}
      <p class="copied" role="status" data-slot="copied"></p>
      <a class="button" href={agent ? "/keys" : "/personal-keys"} data-slot="done">Done</a>
    </section>
  );
}

function CanReadSummary({ canRead }: { canRead: CanReadLabels }): VNode {
  if (canRead.folders.length === 0 && canRead.documents.length === 0) {
    return <span class="muted">Nothing yet</span>;
  }
  return (
    <ul class="can-read">
      {canRead.folders.map((f) => <li key={f} class="folder">{f}</li>)}
      {canRead.documents.map((d) => <li key={d} class="doc">{d}</li>)}
    </ul>
  );
}

/** The agent keys page: the list and the create form. */
export function KeysPage(props: KeysPageProps): VNode {
  return (
    <Layout context={props.context} title="Agent keys" scripts={["snippets.js", "keys.js"]}>
      <header class="page-head">
        <div>
          <h1>Agent keys</h1>
          <p class="muted">
            Each agent key is its own MCP server at{" "}
            <code>{props.publicUrl}/mcp</code>, reading only what you give it. Give one to an agent (Claude,
            an app, a script) for one job: it sees only the folders and files you tick, every call it makes is
            in your audit, and you can roll or delete it at any time.
          </p>
        </div>
      </header>
      <SecretPanel id="secret" publicUrl={props.publicUrl} agent oauth={props.oauth} stdio={props.stdio} />
      {props.keys.length === 0 ? <p class="empty" id="no-keys">No agent keys yet.</p> : (
        <ul class="key-list">
          {props.keys.map((k) => (
            <li key={k.key.key_id} class="card key" data-key-name={k.key.name}>
              <div class="key-head">
                <h2>
                  <a href={`/keys/${k.key.key_id}`}>{k.key.name}</a>
                </h2>
                <code class="masked">{k.masked}</code>
              </div>
              {k.key.description && <p class="description">{k.key.description}</p>}
              <CanReadSummary canRead={k.canRead} />
              <KeyUsageLine usage={k.usage} />
              <p class="muted small">
                Created <Time iso={k.key.created_at} />
                {k.oldValues.map((v) => (
                  <span key={v.last4} class="old-value">
                    · old value <code>{v.masked}</code> works until <Time iso={v.expires_at} />
                  </span>
                ))}
              </p>
              <a href={`/keys/${k.key.key_id}`} class="button">Edit, roll or delete</a>
            </li>
          ))}
        </ul>
      )}
      <section class="card" aria-labelledby="create-title">
        <h2 id="create-title">Create an agent key</h2>
        <form id="key-create" data-api="/api/keys" data-method="POST" novalidate>
          <KeyFields
            name=""
            description=""
            folders={props.folders}
            documents={props.documents}
            checkedFolders={[]}
            checkedDocuments={[]}
            rootLabel={props.rootLabel}
            idPrefix="new"
          />
          <button type="submit" class="primary">Create key</button>
          <Alert />
        </form>
      </section>
    </Layout>
  );
}

/** Options of {@linkcode KeyPage}. */
export interface KeyPageProps {
  context: PageContext;
  view: KeyView;
  folders: readonly Folder[];
  documents: readonly PickableDocument[];
  rootLabel: string;
  publicUrl: string;
  /** Whether connector apps can sign in with OAuth (`SERGO_OAUTH`); default on. */
  oauth?: boolean;
  /** The apps acting as this key through OAuth. */
  apps?: readonly OAuthGrant[];
  /** Absolute paths for the stdio snippet; absent when the data is not on this machine (PostgreSQL). */
  stdio?: StdioPaths;
}

/** The key's page's snippets, with a placeholder where the key goes (keys.js fills them in). */
function ConnectApps(
  { name, publicUrl, oauth = true, stdio }: {
    name: string;
    publicUrl: string;
    oauth?: boolean;
    stdio?: StdioPaths;
  },
): VNode {
  return (
    <section
      class="card snippets"
      id="connect"
      aria-labelledby="connect-title"
      data-key-name={name}
      data-public-url={publicUrl}
      data-oauth={oauth ? "on" : "off"}
      data-stdio={stdio ? JSON.stringify(stdio) : undefined}
    >
      <h2 id="connect-title">Connect an app</h2>
      <p class="hint">
        Put this key's value where the snippets say{" "}
        <code>&lt;agent key&gt;</code>. Sergo shows a value only once, when the key is made or rolled: if it
        is lost, roll the key for a new one. Streamable HTTP at <code>/mcp</code> is preferred;{" "}
        <code>/sse</code> is for apps that have only the older SSE transport.
      </p>
      <div data-slot="snippets"></div>
      <p class="copied" role="status" data-slot="copied"></p>
    </section>
  );
}

const GRACES = [
  { value: "now", label: "Now", ms: 0 },
  { value: "1h", label: "In 1 hour", ms: 3_600_000 },
  { value: "24h", label: "In 24 hours", ms: 86_400_000 },
  { value: "7d", label: "In 7 days", ms: 604_800_000 },
] as const;

/** One agent key's page: edit, roll, delete. */
export function KeyPage(props: KeyPageProps): VNode {
  const { key } = props.view;
  return (
    <Layout context={props.context} title={key.name} scripts={["snippets.js", "keys.js"]}>
      <p class="crumb">
        <a href="/keys">Agent keys</a>
      </p>
      <header class="page-head">
        <div>
          <h1>{key.name}</h1>
          <p class="muted">
            <code class="masked">{props.view.masked}</code> · created <Time iso={key.created_at} />
          </p>
          <KeyUsageLine usage={props.view.usage} />
          {props.view.oldValues.map((v) => (
            <p key={v.last4} class="muted old-value">
              Old value <code>{v.masked}</code> works until <Time iso={v.expires_at} />
            </p>
          ))}
        </div>
      </header>
      <SecretPanel id="secret" publicUrl={props.publicUrl} agent oauth={props.oauth} stdio={props.stdio} />
      <KeyApps apps={props.apps ?? []} csrf={props.context.csrf} />
      <ConnectApps name={key.name} publicUrl={props.publicUrl} oauth={props.oauth} stdio={props.stdio} />
      <section class="card" aria-labelledby="edit-title">
        <h2 id="edit-title">Settings</h2>
        <form
          id="key-edit"
          data-api={`/api/keys/${key.key_id}`}
          data-method="PATCH"
          data-current-name={key.name}
          novalidate
        >
          <KeyFields
            name={key.name}
            description={key.description}
            folders={props.folders}
            documents={props.documents}
            checkedFolders={key.can_read.folders}
            checkedDocuments={key.can_read.documents}
            rootLabel={props.rootLabel}
            idPrefix="edit"
          />
          <button type="submit" class="primary">Save changes</button>
          <p class="notice" role="status" data-slot="saved" hidden></p>
          <Alert />
        </form>
      </section>
      <section class="card" aria-labelledby="roll-title">
        <h2 id="roll-title">Roll</h2>
        <p>
          Rolling makes a new value. The name, description and access stay. Choose when the current value
          stops working, so the apps that use it can move to the new one.
        </p>
        <form id="key-roll" data-api={`/api/keys/${key.key_id}/roll`} data-method="POST" novalidate>
          <fieldset class="choices">
            <legend>The current value stops working</legend>
            {GRACES.map((g) => (
              <label key={g.value} class="check">
                <input
                  type="radio"
                  name="grace"
                  value={g.value}
                  data-ms={String(g.ms)}
                  checked={g.value === "24h"}
                />
                {g.label}
              </label>
            ))}
          </fieldset>
          <p class="hint" id="roll-until" aria-live="polite"></p>
          <button type="submit">Roll key</button>
          <Alert />
        </form>
      </section>
      <section class="card danger-zone" aria-labelledby="delete-title">
        <h2 id="delete-title">Delete</h2>
        <p>Every value of this key stops working at once, including old values still in their grace time.</p>
        <form
          data-api={`/api/keys/${key.key_id}`}
          data-method="DELETE"
          data-done="goto:/keys"
          data-confirm={`Delete the key "${key.name}"? Apps using it stop working at once.`}
        >
          <button type="submit" class="danger">Delete key</button>
          <Alert />
        </form>
      </section>
    </Layout>
  );
}
