/**
 * Canonical JSON in the style of RFC 8785: object keys sorted by UTF-16 code
 * units, no whitespace, numbers as JavaScript prints them, `undefined` members
 * left out.
 *
 * @module
 */

/** Serialises a JSON value canonically, so equal values give equal strings. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === "boolean") return JSON.stringify(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`Cannot serialise a non-finite number: ${value}`);
    return JSON.stringify(value);
  }
  if (typeof value === "string") return JSON.stringify(value);
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) out += (i > 0 ? "," : "") + canonicalJson(value[i] ?? null);
    return `${out}]`;
  }
  if (typeof value === "object") {
    const object = value as Record<string, unknown>;
    // The default sort compares UTF-16 code units, as RFC 8785 asks.
    const keys = Object.keys(object).sort();
    let out = "{";
    for (const key of keys) {
      const member = object[key];
      if (member === undefined) continue;
      out += `${out.length > 1 ? "," : ""}${JSON.stringify(key)}:${canonicalJson(member)}`;
    }
    return `${out}}`;
  }
  throw new TypeError(`Cannot serialise a value of type ${typeof value}`);
}
