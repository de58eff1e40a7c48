/** @jsxImportSource preact */
/**
 * The sign-in page: email and password, posted as a plain form (it works
 * without scripts).
 *
 * @module
 */
import type { VNode } from "preact";
import { Alert, Layout, type PageContext } from "./layout.tsx";

/** Options of {@linkcode SignInPage}. */
export interface SignInPageProps {
  context: PageContext;
  email?: string;
  error?: string;
  notice?: string;
  /** Where to go after signing in. */
  next?: string;
}

/** The sign-in page. */
export function SignInPage({ context, email = "", error, notice, next }: SignInPageProps): VNode {
  return (
    <Layout context={context} title="Sign in">
      <section class="card narrow">
        <h1>Sign in to Sergo</h1>
        {notice && <p class="notice" role="status">{notice}</p>}
        <Alert id="sign-in-error">{error}</Alert>
        <form method="post" action="/sign-in" class="stack" novalidate>
          <input type="hidden" name="csrf" value={context.csrf} />
          {next && <input type="hidden" name="next" value={next} />}
          <label>
            Email
            <input
              type="email"
              name="email"
              value={email}
              autocomplete="username"
              required
              maxlength={320}
              autofocus={!email}
            />
          </label>
          <label>
            Password
            <input
              type="password"
              name="password"
              autocomplete="current-password"
              required
              maxlength={1024}
              autofocus={Boolean(email)}
            />
          </label>
          <button type="submit" class="primary">Sign in</button>
        </form>
        <p class="hint">
          No password yet, or forgot it? Ask an administrator of this Sergo for a one-time link (People page),
          or to run <code>deno task sergo person password --email …</code>
        </p>
      </section>
    </Layout>
  );
}
