/** @jsxImportSource preact */
/**
 * Personal keys: for the REST API. Create (shown once) and delete.
 *
 * @module
 */
import type { VNode } from "preact";
import { SecretPanel } from "./keys_page.tsx";
import { Alert, Layout, type PageContext, Time } from "./layout.tsx";

/** Options of {@linkcode PersonalKeysPage}. */
export interface PersonalKeysPageProps {
  context: PageContext;
  keys: ReadonlyArray<{ id: string; masked: string; created: string }>;
  publicUrl: string;
}

/** The personal keys page. */
export function PersonalKeysPage(props: PersonalKeysPageProps): VNode {
  return (
    <Layout context={props.context} title="Personal keys" scripts={["keys.js"]}>
      <header class="page-head">
        <div>
          <h1>Personal keys</h1>
          <p class="muted">
            A personal key lets your own scripts use the REST API at <code>{props.publicUrl}/api</code>{" "}
            as you. Send it as <code>Authorization: Bearer …</code>. It does not work with MCP.
          </p>
        </div>
      </header>
      <SecretPanel id="secret" publicUrl={props.publicUrl} agent={false} />
      <form id="personal-key-create" data-api="/api/personal-keys" data-method="POST" class="card">
        <button type="submit" class="primary">Create a personal key</button>
        <Alert />
      </form>
      {props.keys.length === 0 ? <p class="empty">No personal keys yet.</p> : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {props.keys.map((k) => (
                <tr key={k.id} data-key-id={k.id}>
                  <td>
                    <code>{k.masked}</code>
                  </td>
                  <td>
                    <Time iso={k.created} />
                  </td>
                  <td>
                    <form
                      data-api={`/api/personal-keys/${k.id}`}
                      data-method="DELETE"
                      data-done="reload"
                      data-confirm={`Delete the personal key ${k.masked}? Scripts using it stop working at once.`}
                      class="inline"
                    >
                      <button type="submit" class="danger">Delete</button>
                      <Alert />
                    </form>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Layout>
  );
}
