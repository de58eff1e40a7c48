/** @jsxImportSource preact */
/**
 * The frame of every console page: head, top bar with the navigation and the
 * sign-out button, and the main column.
 *
 * @module
 */
import type { ComponentChildren, VNode } from "preact";

/** What every page knows about the request. */
export interface PageContext {
  /** The CSRF token, sent back by forms and scripts. */
  csrf: string;
  /** The signed-in person, if any. */
  person: { name: string; email: string; admin?: boolean } | null;
  /** The current path, to mark the navigation. */
  path: string;
  /** The console's asset version, to bust caches. */
  assetVersion: string;
}

/** Options of {@linkcode Layout}. */
export interface LayoutProps {
  context: PageContext;
  title: string;
  /** Client scripts to load from `/console/assets/`. */
  scripts?: string[];
  /** Files of a viewer from npm, from `/console/vendor/` (loaded before the page's own scripts). */
  vendor?: { scripts: string[]; styles: string[] };
  children: ComponentChildren;
}

const NAV = [
  { href: "/documents", label: "Documents" },
  { href: "/keys", label: "Agent keys" },
  { href: "/personal-keys", label: "Personal keys" },
  { href: "/audit", label: "Audit" },
  { href: "/api-docs", label: "API" },
] as const;

/** The page frame. */
export function Layout({ context, title, scripts = [], vendor, children }: LayoutProps): VNode {
  const asset = (name: string) => `/console/assets/${name}?v=${context.assetVersion}`;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="sergo-csrf" content={context.csrf} />
        <title>{`${title} — Sergo`}</title>
        {vendor?.styles.map((name) => <link key={name} rel="stylesheet" href={`/console/vendor/${name}`} />)}
        <link rel="stylesheet" href={asset("console.css")} />
        <link rel="icon" href={asset("favicon.svg")} type="image/svg+xml" />
        <script src={asset("console.js")} defer></script>
        {vendor?.scripts.map((name) => <script key={name} src={`/console/vendor/${name}`} defer></script>)}
        {scripts.map((name) => <script key={name} src={asset(name)} defer></script>)}
      </head>
      <body>
        <a class="skip" href="#main">Skip to the content</a>
        <header class="topbar">
          <a class="brand" href="/">
            <img src={asset("favicon.svg")} alt="" width={22} height={22} />
            <span>Sergo</span>
          </a>
          {context.person && (
            <nav aria-label="Console">
              <ul>
                {[...NAV, ...(context.person.admin ? [{ href: "/people", label: "People" }] : [])].map((
                  item,
                ) => (
                  <li key={item.href}>
                    <a
                      href={item.href}
                      aria-current={context.path === item.href || context.path.startsWith(`${item.href}/`)
                        ? "page"
                        : undefined}
                    >
                      {item.label}
                    </a>
                  </li>
                ))}
              </ul>
            </nav>
          )}
          {context.person && (
            <form class="signout" method="post" action="/sign-out">
              <input type="hidden" name="csrf" value={context.csrf} />
              <span class="who" title={context.person.email}>{context.person.name}</span>
              <button type="submit" class="link">Sign out</button>
            </form>
          )}
        </header>
        <main id="main" tabindex={-1}>{children}</main>
      </body>
    </html>
  );
}

/** A message area that scripts fill in; screen readers read it when it changes. */
export function Alert({ id, children }: { id?: string; children?: ComponentChildren }): VNode {
  return <p class="alert" role="alert" id={id} hidden={!children}>{children}</p>;
}

/** A number of bytes as people read it. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  const mb = bytes / 1024 / 1024;
  return `${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`;
}

/** An ISO time as a short UTC date and time, with the full value in a `<time>` element. */
export function Time({ iso, dateOnly = false }: { iso: string; dateOnly?: boolean }): VNode {
  const d = new Date(iso);
  const text = Number.isNaN(d.getTime())
    ? iso
    : dateOnly
    ? d.toISOString().slice(0, 10)
    : `${d.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  return <time datetime={iso} title={iso}>{text}</time>;
}
