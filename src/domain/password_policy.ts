/**
 * What a new console password must be: 8 to 1,024 characters, and not one of
 * the most common passwords. The list is zxcvbn-ts's `passwords-common`
 * (`@zxcvbn-ts/language-common`: about 49,000 passwords most often found in
 * breaches, kept by the zxcvbn-ts project), compared without case. Long
 * passphrases are welcome: length, not symbols, makes a password hard to guess.
 *
 * @module
 */

/** The fewest characters a password may have. */
export const MIN_PASSWORD_LENGTH = 8;
/** The most characters a password may have (sign-in refuses longer ones). */
export const MAX_PASSWORD_LENGTH = 1024;

let common: Promise<Set<string>> | undefined;

/** The list, loaded when a password is first checked: it is large, and most starts check none. */
function commonPasswords(): Promise<Set<string>> {
  return common ??= import("@zxcvbn-ts/language-common").then(({ dictionary }) =>
    new Set(
      (dictionary as Record<string, readonly string[]>)["passwords-common"]!.map((p) => p.toLowerCase()),
    )
  );
}

/**
 * Why a new password is refused, in one sentence, or null when it is fine.
 * `email` (the person's) is refused as a password too, and so is its part
 * before the @.
 */
export async function passwordProblem(password: string, email = ""): Promise<string | null> {
  const length = [...password].length;
  if (length < MIN_PASSWORD_LENGTH) {
    return `The password must have at least ${MIN_PASSWORD_LENGTH} characters: a few words make a good one`;
  }
  if (length > MAX_PASSWORD_LENGTH) return `The password must have at most ${MAX_PASSWORD_LENGTH} characters`;
  const lower = password.toLowerCase();
  const address = email.trim().toLowerCase();
  if (address && (lower === address || lower === address.split("@")[0])) {
    return "The password must not be the email address: a few words make a good one";
  }
  if ((await commonPasswords()).has(lower)) {
    return "This password is one of the most common passwords, which are guessed first: a few words make a good one";
  }
  return null;
}
