/** @jsxImportSource preact */
/**
 * The consent page: which app asks (its name, where it sends you back, its
 * metadata document), and which agent key's access it gets — one of yours,
 * or a new key made right here. The app then acts exactly as that key.
 * The OAuth server is handed these pages (`console/oauth_pages.ts`).
 *
 * @module
 */
import type { VNode } from "preact";
import type { Folder } from "../../../projections/catalogue.ts";
import type { AgentKey } from "../../../projections/key_scopes.ts";
import { FolderChecks } from "./folder_tree.tsx";
import { Alert, Layout, type PageContext } from "./layout.tsx";
import type { ClientInfo } from "../../auth/oauth/clients.ts";
import type { AuthorizationFields, BackToApp, ConsentDraft } from "../../auth/oauth/deps.ts";

/** Options of {@linkcode ConsentPage}. */
export interface ConsentPageProps {
  context: PageContext;
  client: ClientInfo;
  fields: AuthorizationFields;
  keys: readonly AgentKey[];
  folders: readonly Folder[];
  /** Documents a new key can be given one by one. */
  documents: ReadonlyArray<{ id: string; name: string; folder_id: string | null }>;
  rootLabel: string;
  error?: string;
  /** What the new-key fields held when the form comes back with an error. */
  draft?: ConsentDraft;
}

/** The consent page. */
export function ConsentPage(props: ConsentPageProps): VNode {
  const { context, client, fields, keys, folders, draft } = props;
  const redirectHost = new URL(fields.redirect_uri).host || fields.redirect_uri;
  const chosen = draft?.key ?? (keys[0]?.key_id ?? "new");
  return (
    <Layout context={context} title={`Allow ${client.client_name}`}>
      <section class="card narrow" id="consent">
        <h1>
          Allow <span id="consent-app">{client.client_name}</span> to read your documents?
        </h1>
        <dl class="facts">
          <div>
            <dt>App</dt>
            <dd>{client.client_name}</dd>
          </div>
          <div>
            <dt>Sends you back to</dt>
            <dd id="consent-redirect-host">{redirectHost}</dd>
          </div>
          <div>
            <dt>Described at</dt>
            <dd id="consent-metadata-url">
              {client.metadata_url ?? "nowhere: the app registered itself, so its name is its own claim"}
            </dd>
          </div>
          <div>
            <dt>For</dt>
            <dd>{fields.resource}</dd>
          </div>
        </dl>
        <p>
          The app will act exactly as the agent key you choose: it reads what the key can read, and every call
          is in the audit under that key, marked as coming from this app. You can revoke it on the key's page.
        </p>
        <Alert id="consent-error">{props.error}</Alert>
        <form method="post" action="/oauth/authorize" class="stack">
          <input type="hidden" name="csrf" value={context.csrf} />
          <input type="hidden" name="response_type" value="code" />
          <input type="hidden" name="client_id" value={fields.client_id} />
          <input type="hidden" name="redirect_uri" value={fields.redirect_uri} />
          {fields.state !== null && <input type="hidden" name="state" value={fields.state} />}
          <input type="hidden" name="code_challenge" value={fields.code_challenge} />
          <input type="hidden" name="code_challenge_method" value="S256" />
          <input type="hidden" name="resource" value={fields.resource} />
          {fields.scope !== null && <input type="hidden" name="scope" value={fields.scope} />}
          <fieldset>
            <legend>Which key's access does the app get?</legend>
            {keys.map((key) => (
              <label key={key.key_id} class="check choice">
                <input type="radio" name="key" value={key.key_id} checked={chosen === key.key_id} />
                <strong>{key.name}</strong>
                {key.description && <span class="muted">— {key.description}</span>}
              </label>
            ))}
            <label class="check choice">
              <input type="radio" name="key" value="new" id="consent-new-key" checked={chosen === "new"} />
              <strong>A new key</strong>
            </label>
            <div class="stack" id="consent-new-fields">
              <label>
                Name
                <input
                  name="new_name"
                  value={draft?.name ?? ""}
                  maxlength={32}
                  aria-describedby="consent-name-rule"
                />
                <span class="hint" id="consent-name-rule">
                  2 to 32 characters: lowercase letters a-z, digits 0-9 and -, starting with a letter
                </span>
              </label>
              <label>
                Description
                <input name="new_description" value={draft?.description ?? ""} maxlength={1000} />
              </label>
              <FolderChecks
                folders={folders}
                documents={props.documents}
                checkedFolders={draft?.folders ?? []}
                checkedDocuments={draft?.documents ?? []}
                rootLabel={props.rootLabel}
              />
            </div>
          </fieldset>
          <div class="actions">
            <button type="submit" name="decision" value="allow" class="primary" id="consent-allow">
              Allow
            </button>
            <button type="submit" name="decision" value="deny" id="consent-deny">Deny</button>
          </div>
        </form>
      </section>
    </Layout>
  );
}

/**
 * The page shown when an authorization request is refused before the person
 * decided anything: with a bad client or redirect URI it says so and nothing
 * more; with a known app and redirect URI it offers a link back to the app
 * (with the OAuth error), which the person follows or not — Sergo never sends
 * a browser to an app's address on its own for a request nobody has seen.
 */
export function AuthorizationErrorPage(
  { context, message, back }: { context: PageContext; message: string; back?: BackToApp },
): VNode {
  const host = back ? hostOf(back.href) : "";
  return (
    <Layout context={context} title="This app cannot sign in">
      <section class="card narrow">
        <h1>This app cannot sign in</h1>
        <p class="alert" role="alert" id="authorize-error">{message}</p>
        <p class="hint">Nothing was shared. Ask the app's maker, or connect with an agent key instead.</p>
        {back && (
          <p>
            <a id="back-to-app" href={back.href} rel="noreferrer">Go back to {back.name}</a>{" "}
            <span class="hint">({host})</span>
          </p>
        )}
      </section>
    </Layout>
  );
}

function hostOf(href: string): string {
  const url = new URL(href);
  return url.host || url.protocol;
}
