/**
 * Planted bugs in the domain's deciders (`src/domain/*_decide.ts`), each
 * caught by the decider's given/when/then test, without a database or a
 * clock.
 *
 * @module
 */
import type { Mutation } from "./mutations.ts";

const FOLDERS = "test/domain/folders_decide_test.ts";
const DOCUMENTS = "test/domain/documents_decide_test.ts";
const KEYS = "test/domain/keys_decide_test.ts";
const PEOPLE = "test/domain/people_decide_test.ts";
const FOLDER_NAMES = "test/domain/folder_names_test.ts";
const EMAIL_RACE = "test/domain/email_race_test.ts";
const KEY_NAMES = "test/domain/key_names_test.ts";

/** The domain deciders' planted bugs. */
export const MUTATIONS_DOMAIN: Mutation[] = [
  {
    name: "folders: a rename to the name the folder has recorded",
    file: "src/domain/folders_decide.ts",
    from: "  if (name === folder.name) return [];\n",
    to: "",
    tests: [FOLDERS],
  },
  {
    name: "folders: a move into the folder's own subfolder decided",
    file: "src/domain/folders_decide.ts",
    from: "if (state.parentInside) throw intoItself(folder.name);",
    to: "",
    tests: [FOLDERS],
  },
  {
    name: "folders: a recursive delete deletes parents before their subfolders",
    file: "src/domain/folders_decide.ts",
    from: 'b.path.split("/").length - a.path.split("/").length',
    to: 'a.path.split("/").length - b.path.split("/").length',
    tests: [FOLDERS],
  },
  {
    name: "folders: a folder that holds something deleted without recursive",
    file: "src/domain/folders_decide.ts",
    from: "if (!command.recursive && state.holdsAnything) {",
    to: "if (false) {",
    tests: [FOLDERS],
  },
  {
    name: "documents: a PDF copy asked of a PDF",
    file: "src/domain/documents_decide.ts",
    from: 'if (doc.type === "pdf") {',
    to: "if (false) {",
    tests: [DOCUMENTS],
  },
  {
    name: "documents: the preset none asks for processing instead of leaving the document out of search",
    file: "src/domain/documents_decide.ts",
    from: 'preset === "none"',
    to: "false",
    tests: [DOCUMENTS],
  },
  {
    name: 'documents: the same bytes refused on "Upload anyway" too',
    file: "src/domain/documents_decide.ts",
    from: "if (command.refuseDuplicate && state.twin)",
    to: "if (state.twin)",
    tests: [DOCUMENTS],
  },
  {
    name: "documents: a move to the folder the document is in recorded",
    file: "src/domain/documents_decide.ts",
    from: "  if (doc.folder_id === command.folderId) return [];\n",
    to: "",
    tests: [DOCUMENTS],
  },
  {
    name: "keys: a change records the folders a key reads already",
    file: "src/domain/keys_decide.ts",
    from: "if (JSON.stringify(canRead) !== JSON.stringify(key.can_read)) data.can_read = canRead;",
    to: "data.can_read = canRead;",
    tests: [KEYS],
  },
  {
    name: "keys: a roll's grace counted from 1970, not from now",
    file: "src/domain/keys_decide.ts",
    from: "command.metadata.now.getTime() + GRACE[grace]",
    to: "GRACE[grace]",
    tests: [KEYS],
  },
  {
    name: "keys: a rename to a name another key has decided",
    file: "src/domain/keys_decide.ts",
    from: "    if (state.nameTaken) throw keyNameTaken(data.name);\n",
    to: "",
    tests: [KEYS],
  },
  {
    name: "people: an email another person has added again",
    file: "src/domain/people_decide.ts",
    from: "  if (state.emailTaken) throw emailTaken(email);\n",
    to: "",
    tests: [PEOPLE],
  },
  {
    name: "people: older password links left open by a new one",
    file: "src/domain/people_decide.ts",
    from: "const closed = state.openLinkIds.map(",
    to: "const closed = state.openLinkIds.slice(0, 0).map(",
    tests: [PEOPLE],
  },
  {
    name: "people: taking rights from one who is no administrator recorded",
    file: "src/domain/people_decide.ts",
    from: "  if (!state.isAdministrator) return [];\n",
    to: "",
    tests: [PEOPLE],
  },
  {
    name: "people: an invitation works 8 days",
    file: "src/domain/people_decide.ts",
    from: "export const INVITATION_LIFETIME_MS = 7 * 24 * 3600_000;",
    to: "export const INVITATION_LIFETIME_MS = 8 * 24 * 3600_000;",
    tests: [PEOPLE],
  },
  {
    name:
      "turns: one app's commands on one person's names do not wait for each other (refusals recorded as pairs)",
    file: "src/domain/locks.ts",
    from: "  return await inTurn(queue, key, fn);",
    to: "  return await fn();",
    tests: [FOLDER_NAMES, EMAIL_RACE, KEY_NAMES],
  },
  {
    name: "turns: apps beside each other (processes) share one queue, so their race is never tested",
    file: "src/domain/locks.ts",
    from: "let queue = tailsOf.get(owner);",
    to: "let queue: Tails | undefined = tails;",
    tests: [FOLDER_NAMES, EMAIL_RACE, KEY_NAMES],
  },
];
