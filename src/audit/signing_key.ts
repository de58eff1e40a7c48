/**
 * The install's audit signing key: an Ed25519 key pair created on first start
 * and kept in the data directory (`audit-signing-key.json`, mode 0600). It
 * signs export manifests; its public key lets anyone check them offline.
 *
 * @module
 */
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  sign,
  verify,
} from "node:crypto";
import { join } from "node:path";

/** The file in the data directory that holds the key pair. */
export const SIGNING_KEY_FILE = "audit-signing-key.json";

/** The install's signing key, loaded. */
export interface SigningKey {
  /** The public key as SPKI PEM. */
  publicKeyPem: string;
  /** sha256 of the public key's DER form, hex. */
  fingerprint: string;
  /** Signs bytes; returns the signature in base64. */
  sign(data: Uint8Array): string;
}

interface KeyFile {
  algorithm: "Ed25519";
  created_at: string;
  public_key: string;
  private_key: string;
}

/**
 * Loads the signing key from `dataDir`, creating it (mode 0600) if there is
 * none yet. Safe when several processes start at once: the first file wins.
 */
export async function ensureSigningKey(dataDir: string): Promise<SigningKey> {
  const path = join(dataDir, SIGNING_KEY_FILE);
  try {
    return parseKeyFile(path, await Deno.readTextFile(path));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  await Deno.mkdir(dataDir, { recursive: true });
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const file: KeyFile = {
    algorithm: "Ed25519",
    created_at: new Date().toISOString(),
    public_key: publicKey.export({ type: "spki", format: "pem" }) as string,
    private_key: privateKey.export({ type: "pkcs8", format: "pem" }) as string,
  };
  const temp = `${path}.${crypto.randomUUID()}.tmp`;
  await Deno.writeTextFile(temp, JSON.stringify(file, null, 2) + "\n", { mode: 0o600, createNew: true });
  try {
    await Deno.link(temp, path);
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
  } finally {
    await Deno.remove(temp);
  }
  return parseKeyFile(path, await Deno.readTextFile(path));
}

/** The install's public key as PEM, creating the key pair if needed. */
export async function publicKeyPem(dataDir: string): Promise<string> {
  return (await ensureSigningKey(dataDir)).publicKeyPem;
}

/** sha256 (hex) of a PEM public key's DER form. */
export function keyFingerprint(publicKeyPem: string): string {
  const der = createPublicKey(publicKeyPem).export({ type: "spki", format: "der" });
  return createHash("sha256").update(der).digest("hex");
}

/** Whether `signature` (base64) is a valid Ed25519 signature of `data` by `publicKeyPem`. */
export function verifySignature(publicKeyPem: string, data: Uint8Array, signature: string): boolean {
  try {
    const key = createPublicKey(publicKeyPem);
    if (key.asymmetricKeyType !== "ed25519") return false;
    return verify(null, data, key, Uint8Array.from(atob(signature), (c) => c.charCodeAt(0)));
  } catch {
    return false;
  }
}

function parseKeyFile(path: string, text: string): SigningKey {
  let file: KeyFile;
  try {
    file = JSON.parse(text);
  } catch {
    throw new Error(`Cannot read the audit signing key "${path}": it is not JSON`);
  }
  if (
    file.algorithm !== "Ed25519" || typeof file.private_key !== "string" ||
    typeof file.public_key !== "string"
  ) {
    throw new Error(`Cannot read the audit signing key "${path}": expected an Ed25519 key pair`);
  }
  const privateKey = createPrivateKey(file.private_key);
  return {
    publicKeyPem: file.public_key,
    fingerprint: keyFingerprint(file.public_key),
    sign(data: Uint8Array): string {
      const bytes = sign(null, data, privateKey);
      let binary = "";
      for (const byte of bytes) binary += String.fromCharCode(byte);
      return btoa(binary);
    },
  };
}
