/**
 * The fields of a passage that search ranks: its text, its heading (a Word
 * passage's section, a slide's title), its speaker notes and its file's name.
 * The index and the ranking take them from here alike.
 *
 * @module
 */

/** A passage as the index stores it. */
export interface StoredPassage {
  text: string;
  section: string | null;
  notes: string | null;
}

/** What the fields need to know of the passage's document. */
export interface StoredDocument {
  name: string;
  type: string;
}

/** The text of each field. */
export interface PassageFields {
  body: string;
  heading: string;
  notes: string;
  name: string;
}

/** The fields of a passage: a slide's first line is its title (slides put the title first). */
export function passageFields(passage: StoredPassage, document: StoredDocument): PassageFields {
  const heading = passage.section ?? (document.type === "pptx" ? firstLine(passage.text) : "");
  return { body: passage.text, heading, notes: passage.notes ?? "", name: nameWords(document.name) };
}

function firstLine(text: string): string {
  return text.split("\n").find((line) => line.trim() !== "")?.trim() ?? "";
}

/** A file name as words: the extension dropped, dashes, underscores, dots and camel case split. */
function nameWords(name: string): string {
  return name.replace(/\.[^.]{1,5}$/, "").replace(/[-_.]+/g, " ").replace(/(\p{Ll})(\p{Lu})/gu, "$1 $2");
}
