/**
 * The rules that names, emails and descriptions follow, each a check that
 * returns one sentence on failure.
 *
 * @module
 */
import { DomainError } from "./errors.ts";

/** An agent key name: 2 to 32 of a-z, 0-9 and `-`, starting with a letter. */
export const KEY_NAME_PATTERN = /^[a-z][a-z0-9-]{1,31}$/;
/** Longest agent key description. */
export const MAX_DESCRIPTION = 1000;
/** Longest folder name. */
export const MAX_FOLDER_NAME = 200;
/** Longest person name. */
export const MAX_PERSON_NAME = 200;
/** Longest file name. */
export const MAX_FILE_NAME = 255;

// deno-lint-ignore no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/;
/** Characters that change the order a name is shown in (U+202E shows "exe.pdf" for "fdp.exe"). */
const BIDI_CONTROL = /\p{Bidi_Control}/u;

/** Refuses control characters and bidirectional controls in a name, naming the one found. */
function checkCharacters(what: string, name: string): void {
  const bidi = BIDI_CONTROL.exec(name);
  if (bidi) {
    throw new DomainError(
      "invalid",
      `${what} cannot contain the bidirectional control character ${
        codePoint(bidi[0])
      }: it makes a name read differently from what it is`,
    );
  }
  const control = CONTROL.exec(name);
  if (control) {
    throw new DomainError(
      "invalid",
      `${what} cannot contain control characters (found ${codePoint(control[0])})`,
    );
  }
}

function codePoint(character: string): string {
  return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** Every rule a key name breaks, as clauses ("it has 1 character; it must have at least 2"), in one list. */
export function keyNameProblems(name: string): string[] {
  const problems: string[] = [];
  const length = [...name].length;
  if (length < 2) problems.push(`it has ${length} character${length === 1 ? "" : "s"}, and needs at least 2`);
  if (length > 32) problems.push(`it has ${length} characters, and may have at most 32`);
  if (length > 0 && !/^[a-z]/.test(name)) problems.push("it must start with a lowercase letter a-z");
  const bad = [...new Set(name.replace(/[a-z0-9-]/g, ""))];
  if (bad.length > 0) {
    problems.push(`it may use only a-z, 0-9 and - (not ${bad.map((c) => JSON.stringify(c)).join(", ")})`);
  }
  return problems;
}

/** Checks an agent key name; the error names every rule it breaks. */
export function checkKeyName(name: string): string {
  if (!KEY_NAME_PATTERN.test(name)) {
    throw new DomainError(
      "invalid",
      `Key name "${name}" is not allowed: ${keyNameProblems(name).join("; ")}`,
    );
  }
  return name;
}

/** Checks an agent key description. */
export function checkDescription(description: string): string {
  if (description.length > MAX_DESCRIPTION) {
    throw new DomainError(
      "invalid",
      `Description is too long: at most ${MAX_DESCRIPTION} characters, got ${description.length}`,
    );
  }
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(description)) {
    throw new DomainError("invalid", "Description cannot contain control characters");
  }
  return description;
}

/** Checks a folder name. */
export function checkFolderName(name: string): string {
  if (name.trim() === "") throw new DomainError("invalid", "Folder name cannot be empty");
  if (name !== name.trim()) {
    throw new DomainError("invalid", `Folder name "${name}" cannot start or end with spaces`);
  }
  if (name.includes("/")) throw new DomainError("invalid", `Folder name "${name}" cannot contain "/"`);
  checkCharacters("Folder name", name);
  if (name.length > MAX_FOLDER_NAME) {
    throw new DomainError(
      "invalid",
      `Folder name is too long: at most ${MAX_FOLDER_NAME} characters, got ${name.length}`,
    );
  }
  if (name === "." || name === "..") throw new DomainError("invalid", `Folder name "${name}" is not allowed`);
  return name;
}

/** Checks a person's name. */
export function checkPersonName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "") throw new DomainError("invalid", "Name cannot be empty");
  checkCharacters("Name", trimmed);
  if (trimmed.length > MAX_PERSON_NAME) {
    throw new DomainError(
      "invalid",
      `Name is too long: at most ${MAX_PERSON_NAME} characters, got ${trimmed.length}`,
    );
  }
  return trimmed;
}

/** Checks an email address (a practical check, not RFC 5322). */
export function checkEmail(email: string): string {
  const trimmed = email.trim();
  if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(trimmed) || trimmed.length > 320) {
    throw new DomainError("invalid", `"${email}" is not an email address`);
  }
  return trimmed;
}

/** Checks a file name given at upload. */
export function checkFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  if (base.trim() === "") throw new DomainError("invalid", "File name cannot be empty");
  checkCharacters("File name", base);
  if (base.length > MAX_FILE_NAME) {
    throw new DomainError(
      "invalid",
      `File name is too long: at most ${MAX_FILE_NAME} characters, got ${base.length}`,
    );
  }
  return base;
}

/** Splits a folder path such as `Energy outlooks/Basic` into checked names. */
export function splitFolderPath(path: string): string[] {
  const parts = path.split("/").map((part) => part.trim()).filter((part) => part !== "");
  if (parts.length === 0) throw new DomainError("invalid", "Folder path cannot be empty");
  return parts.map(checkFolderName);
}

/** The grace choices of a roll, with their length in ms. */
export const GRACE = { now: 0, "1h": 3_600_000, "24h": 86_400_000, "7d": 604_800_000 } as const;
/** A grace choice. */
export type Grace = keyof typeof GRACE;

/** Checks a grace choice. */
export function checkGrace(grace: string): Grace {
  if (!Object.hasOwn(GRACE, grace)) {
    throw new DomainError("invalid", `Grace "${grace}" is not one of: now, 1h, 24h, 7d`);
  }
  return grace as Grace;
}
