/** @jsxImportSource preact */
/**
 * People: the first-run setup page (the first person, an administrator), the
 * page where an invitation or reset link sets a password, and the
 * administrators' page that adds people and makes those links. Plain forms:
 * they work without scripts.
 *
 * @module
 */
import type { VNode } from "preact";
import { MIN_PASSWORD_LENGTH } from "../../domain/password_policy.ts";
import { Alert, Layout, type PageContext, Time } from "./layout.tsx";

function PasswordFields({ email }: { email?: string }): VNode {
  return (
    <>
      {email !== undefined && (
        <input type="text" name="username" value={email} autocomplete="username" hidden readonly />
      )}
      <label>
        Password
        <input type="password" name="password" autocomplete="new-password" required maxlength={1024} />
        <span class="hint">
          At least {MIN_PASSWORD_LENGTH}{" "}
          characters; a few words make a good one. Common passwords are refused.
        </span>
      </label>
      <label>
        The same password again
        <input type="password" name="password2" autocomplete="new-password" required maxlength={1024} />
      </label>
    </>
  );
}

/** Options of {@linkcode SetupPage}. */
export interface SetupPageProps {
  context: PageContext;
  token: string;
  name?: string;
  email?: string;
  error?: string;
}

/** The first-run page: who the first person is, and their password. */
export function SetupPage({ context, token, name = "", email = "", error }: SetupPageProps): VNode {
  return (
    <Layout context={context} title="Set up Sergo">
      <section class="card narrow">
        <h1>Set up Sergo</h1>
        <p>
          Nobody uses this Sergo yet. You become its first person and its administrator: you can then add
          people, who each see only their own documents, keys and audit.
        </p>
        <Alert id="setup-error">{error}</Alert>
        <form method="post" action="/setup" class="stack" novalidate>
          <input type="hidden" name="csrf" value={context.csrf} />
          <input type="hidden" name="token" value={token} />
          <label>
            Your name
            <input
              type="text"
              name="name"
              value={name}
              autocomplete="name"
              required
              maxlength={200}
              autofocus
            />
          </label>
          <label>
            Email
            <input type="email" name="email" value={email} autocomplete="username" required maxlength={320} />
          </label>
          <PasswordFields />
          <button type="submit" class="primary">Create my account</button>
        </form>
      </section>
    </Layout>
  );
}

/** Options of {@linkcode PasswordPage}. */
export interface PasswordPageProps {
  context: PageContext;
  token: string;
  name: string;
  email: string;
  purpose: "invite" | "reset";
  error?: string;
}

/** The page an invitation or reset link opens: set a password, then you are signed in. */
export function PasswordPage(props: PasswordPageProps): VNode {
  const { context, token, name, email, purpose, error } = props;
  return (
    <Layout context={context} title={purpose === "invite" ? "Welcome" : "New password"}>
      <section class="card narrow">
        <h1>{purpose === "invite" ? `Welcome to Sergo, ${name}` : `A new password for ${name}`}</h1>
        <p>
          Choose the password you sign in with as <strong>{email}</strong>. This link works once.
        </p>
        <Alert id="password-error">{error}</Alert>
        <form method="post" action="/password" class="stack" novalidate>
          <input type="hidden" name="csrf" value={context.csrf} />
          <input type="hidden" name="token" value={token} />
          <PasswordFields email={email} />
          <button type="submit" class="primary">Set my password</button>
        </form>
      </section>
    </Layout>
  );
}

/** One person as the administrators' page lists them. */
export interface PersonRow {
  person_id: string;
  name: string;
  email: string;
  admin: boolean;
  hasPassword: boolean;
  /** An open invitation or reset link: until when it works. */
  linkUntil: string | null;
}

/** Options of {@linkcode PeoplePage}. */
export interface PeoplePageProps {
  context: PageContext;
  people: PersonRow[];
  /** A link just made, shown once. */
  made?: { name: string; url: string; purpose: "invite" | "reset"; expiresAt: string };
  error?: string;
  name?: string;
  email?: string;
}

/** The administrators' page: everyone, adding a person, and password links. */
export function PeoplePage(props: PeoplePageProps): VNode {
  const { context, people, made, error } = props;
  return (
    <Layout context={context} title="People">
      <header class="page-head">
        <div>
          <h1>People</h1>
          <p class="muted">
            Only administrators see this page. Each person sees only their own documents, agent keys and
            audit. A person sets their password through a one-time link you send them.
          </p>
        </div>
      </header>
      {made && (
        <section class="card secret" id="password-link" role="status">
          <h2>
            {made.purpose === "invite" ? `Invitation for ${made.name}` : `Password reset for ${made.name}`}
          </h2>
          <p>
            Send this link to {made.name}. It works once, until{" "}
            <Time iso={made.expiresAt} />, and is shown only now.
          </p>
          <p>
            <code class="secret-value" id="password-link-url">{made.url}</code>
          </p>
        </section>
      )}
      <section class="card">
        <h2>Add a person</h2>
        <Alert id="people-error">{error}</Alert>
        <form method="post" action="/people" class="stack" novalidate>
          <input type="hidden" name="csrf" value={context.csrf} />
          <input type="hidden" name="action" value="add" />
          <label>
            Name
            <input type="text" name="name" value={props.name ?? ""} required maxlength={200} />
          </label>
          <label>
            Email
            <input type="email" name="email" value={props.email ?? ""} required maxlength={320} />
          </label>
          <button type="submit" class="primary">Add and make an invitation link</button>
        </form>
      </section>
      <div class="table-wrap">
        <table id="people">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Password</th>
              <th scope="col">
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {people.map((p) => (
              <tr key={p.person_id} data-person-id={p.person_id}>
                <td>{p.name}</td>
                <td>{p.email}</td>
                <td>{p.admin ? "Administrator" : "Person"}</td>
                <td>
                  {p.hasPassword ? "Set" : "Not set yet"}
                  {p.linkUntil && (
                    <>
                      {" "}— link open until <Time iso={p.linkUntil} />
                    </>
                  )}
                </td>
                <td>
                  <form method="post" action="/people" class="inline">
                    <input type="hidden" name="csrf" value={context.csrf} />
                    <input type="hidden" name="action" value="reset" />
                    <input type="hidden" name="person_id" value={p.person_id} />
                    <button type="submit">
                      {p.hasPassword ? "Make a password reset link" : "Make a new invitation link"}
                    </button>
                  </form>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </Layout>
  );
}
