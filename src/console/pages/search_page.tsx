/** @jsxImportSource preact */
/**
 * Search results in the console: what the `search` tool returns for the same
 * query and scope, each excerpt opening its document at that page (the page's
 * text beside its picture).
 *
 * @module
 */
import type { VNode } from "preact";
import type { ConsoleSearchResult } from "../search.ts";
import { shownExcerpt } from "../excerpt.ts";
import { Layout, type PageContext } from "./layout.tsx";

/** The search box: on the documents page and above the results. */
export function SearchBox(
  { query = "", asKeyId = "", keys }: {
    query?: string;
    asKeyId?: string;
    keys: ReadonlyArray<{ id: string; name: string }>;
  },
): VNode {
  return (
    <form method="get" action="/search" class="search-box card" role="search" id="search">
      <label class="grow">
        Search your documents
        <input type="search" name="q" value={query} maxlength={500} placeholder="What would an agent ask?" />
      </label>
      <label>
        As
        <select name="as">
          <option value="">you (all your documents)</option>
          {keys.map((key) => (
            <option key={key.id} value={key.id} selected={asKeyId === key.id}>the key {key.name}</option>
          ))}
        </select>
      </label>
      <button type="submit" class="primary">Search</button>
      <p class="hint">
        The same excerpts, pages and marks the <code>search</code>{" "}
        tool gives an agent; “as a key” shows only what that key can read.
      </p>
    </form>
  );
}

/** How many excerpts in how many documents, and whether more follow. */
function ResultCount({ result }: { result: ConsoleSearchResult }): VNode {
  const hits = result.documents.reduce((sum, doc) => sum + doc.hits.length, 0);
  const docs = result.documents.length;
  const from = result.offset + 1;
  return (
    <p class="muted" id="result-count" role="status">
      {hits === 1 ? "1 excerpt" : `${hits} excerpts`} in {docs === 1 ? "1 document" : `${docs} documents`}
      {result.offset > 0 ? ` (results from ${from} on)` : ""}
      {result.nextOffset != null ? " — more below" : ""}
    </p>
  );
}

/** An excerpt with the query's words marked, cut to its matching part; the whole excerpt on demand. */
function Excerpt({ text, query }: { text: string; query: string }): VNode {
  const shown = shownExcerpt(text, query);
  return (
    <div class="excerpt-box">
      <p class="excerpt">
        {shown.parts.map((part, i) => part.mark ? <mark key={i}>{part.text}</mark> : part.text)}
      </p>
      {shown.shortened && (
        <details class="whole-excerpt">
          <summary>The whole excerpt, as the agent gets it</summary>
          <pre>{text}</pre>
        </details>
      )}
    </div>
  );
}

/** Options of {@linkcode SearchPage}. */
export interface SearchPageProps {
  context: PageContext;
  keys: ReadonlyArray<{ id: string; name: string }>;
  result: ConsoleSearchResult | null;
  /** The languages an English question is translated into (the dictionaries' pairs, such as `en→de`). */
  translations?: readonly string[];
  /** Why cross-language search is off when no pair is on, in one sentence (default: none is installed). */
  translationsOff?: string;
}

const LANGUAGE_NAMES: Readonly<Record<string, string>> = {
  ar: "Arabic",
  de: "German",
  es: "Spanish",
  fr: "French",
  id: "Indonesian",
  ja: "Japanese",
  pt: "Portuguese",
  ru: "Russian",
  zh: "Chinese",
};

/** The sentence saying which languages an English question also finds pages in. */
export function TranslationNote({ pairs, off }: { pairs: readonly string[]; off?: string }): VNode {
  const languages = [...new Set(pairs.map((pair) => pair.split("→")[1] ?? pair))]
    .map((code) => LANGUAGE_NAMES[code] ?? code).sort();
  return languages.length > 0
    ? (
      <p class="hint">
        An English question also finds pages in{" "}
        {languages.join(", ")}: its words are translated through the installed bilingual dictionaries.
      </p>
    )
    : <p class="hint">{off ?? "Cross-language search is off: no bilingual dictionary is installed."}</p>;
}

/** The search page. */
export function SearchPage(
  { context, keys, result, translations = [], translationsOff }: SearchPageProps,
): VNode {
  const as = result?.asKey ? `&as=${encodeURIComponent(result.asKey.id)}` : "";
  return (
    <Layout context={context} title={result ? `Search: ${result.query}` : "Search"}>
      <h1>Search</h1>
      <SearchBox query={result?.query} asKeyId={result?.asKey?.id} keys={keys} />
      <TranslationNote pairs={translations} off={translationsOff} />
      {result?.message && <p class="empty" role="status">{result.message}</p>}
      {result && result.documents.length > 0 && <ResultCount result={result} />}
      {result && result.documents.length > 0 && (
        <ol class="results" id="results">
          {result.documents.map((doc) => (
            <li key={doc.document_id} class="card result" data-document-id={doc.document_id}>
              <h2>
                <a href={`/documents/${doc.document_id}`}>{doc.document}</a>
              </h2>
              <p class="muted">{doc.folder}</p>
              <ul class="hits">
                {doc.hits.map((hit, i) => (
                  <li key={i}>
                    <a
                      class="hit"
                      href={hit.page
                        ? `/documents/${doc.document_id}?page=${hit.page}#page-${hit.page}`
                        : `/documents/${doc.document_id}`}
                    >
                      {hit.page ? `Page ${doc.pages_estimated ? "≈" : ""}${hit.page}` : "Open"}
                      {hit.section ? ` — ${hit.section}` : ""}
                    </a>
                    {hit.view_page_may_help && (
                      <span class="badge warn" title="The text may miss a figure, chart or table">
                        page to view
                      </span>
                    )}
                    <Excerpt text={hit.excerpt} query={result.query} />
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ol>
      )}
      {result?.nextOffset != null && (
        <p>
          <a
            class="button"
            rel="next"
            href={`/search?q=${encodeURIComponent(result.query)}${as}&offset=${result.nextOffset}`}
          >
            More results
          </a>
        </p>
      )}
    </Layout>
  );
}
