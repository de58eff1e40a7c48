/** @jsxImportSource preact */
/**
 * The apps that act as a key through OAuth, on the key's page: who they are,
 * when they were allowed and last signed in, and a button that stops them at once.
 *
 * @module
 */
import type { VNode } from "preact";
import type { OAuthGrant } from "../../../projections/oauth_grants.ts";
import { Time } from "./layout.tsx";

/** The apps list of a key. */
export function KeyApps({ apps, csrf }: { apps: readonly OAuthGrant[]; csrf: string }): VNode {
  return (
    <section class="card" aria-labelledby="apps-title" id="key-apps">
      <h2 id="apps-title">Apps signed in with this key</h2>
      {apps.length === 0
        ? (
          <p class="muted">
            No app signed in with OAuth acts as this key. Rolling the key does not sign apps out; revoking
            does.
          </p>
        )
        : (
          <ul class="plain">
            {apps.map((app) => (
              <li key={app.grant_id} class="key-app" data-grant={app.grant_id}>
                <strong class="key-app-name">{app.client_name}</strong>{" "}
                <span class="muted">
                  back to {hostOf(app.redirect_uri)}
                  {app.metadata_url && (
                    <>
                      , described at <code>{app.metadata_url}</code>
                    </>
                  )} · allowed <Time iso={app.created_at} />
                  {app.last_used_at && (
                    <>
                      , last signed in <Time iso={app.last_used_at} />
                    </>
                  )}
                </span>
                <form method="post" action={`/oauth/grants/${app.grant_id}/revoke`} class="inline">
                  <input type="hidden" name="csrf" value={csrf} />
                  <button type="submit" class="danger">Revoke</button>
                </form>
              </li>
            ))}
          </ul>
        )}
    </section>
  );
}

function hostOf(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}
