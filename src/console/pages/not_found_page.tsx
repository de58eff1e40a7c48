/** @jsxImportSource preact */
/**
 * The console's "not found" page, for a document or key that does not exist
 * (or belongs to someone else, which looks the same).
 *
 * @module
 */
import type { VNode } from "preact";
import { Layout, type PageContext } from "./layout.tsx";

/** The not-found page with one sentence and a way back (none where there is nowhere to go back to). */
export function NotFoundPage(
  { context, message, back, title = "Not found" }: {
    context: PageContext;
    message: string;
    back: string | null;
    title?: string;
  },
): VNode {
  return (
    <Layout context={context} title={title}>
      <section class="card narrow">
        <h1>{title}</h1>
        <p>{message}</p>
        {back && (
          <p>
            <a href={back} class="button">Go back</a>
          </p>
        )}
      </section>
    </Layout>
  );
}
