/**
 * A test CA and a localhost server certificate signed by it, made with
 * openssl (rustls refuses a CA certificate as the server's own).
 *
 * @module
 */
import assert from "node:assert/strict";

/** The files of {@linkcode makeLocalhostCertificate}. */
export interface LocalhostCertificate {
  /** The CA's certificate, for the client to trust. */
  ca: string;
  /** The server's certificate. */
  cert: string;
  /** The server's private key. */
  key: string;
}

/** Writes a CA and a certificate for localhost and 127.0.0.1 into `dir`. */
export async function makeLocalhostCertificate(dir: string): Promise<LocalhostCertificate> {
  const [ca, caKey, cert, key, csr, ext] = [
    "ca.pem",
    "ca-key.pem",
    "cert.pem",
    "key.pem",
    "server.csr",
    "ext.cnf",
  ]
    .map((name) => `${dir}/${name}`) as [string, string, string, string, string, string];
  await Deno.writeTextFile(ext, "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n");
  const steps = [
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      caKey,
      "-out",
      ca,
      "-days",
      "1",
      "-subj",
      "/CN=Sergo test CA",
    ],
    ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", "/CN=localhost"],
    [
      "x509",
      "-req",
      "-in",
      csr,
      "-CA",
      ca,
      "-CAkey",
      caKey,
      "-CAcreateserial",
      "-out",
      cert,
      "-days",
      "1",
      "-extfile",
      ext,
    ],
  ];
  for (const args of steps) {
    const made = await new Deno.Command("openssl", { args, stdout: "null", stderr: "piped" }).output();
    assert.equal(made.code, 0, new TextDecoder().decode(made.stderr));
  }
  return { ca, cert, key };
}
