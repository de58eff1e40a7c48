/**
 * Builds a zip bomb shaped like a Word file in well under a second: one
 * megabyte of paragraphs is deflated once, and the same deflate blocks are
 * repeated, so `word/document.xml` inflates to hundreds of megabytes while the
 * file stays near a megabyte (the issue's `bomb-400MB.docx`: 1.18 MB holding
 * 406 MB of XML).
 *
 * @module
 */
import zlib from "node:zlib";

const encoder = new TextEncoder();

/** What {@linkcode buildBombDocx} made. */
export interface BombDocx {
  bytes: Uint8Array;
  /** How large `word/document.xml` inflates to, in bytes. */
  xmlBytes: number;
}

/** A .docx whose `word/document.xml` inflates to about `megabytes` MB (default 406). */
export function buildBombDocx(megabytes = 406): BombDocx {
  const head = encoder.encode(
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
      '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>',
  );
  const tail = encoder.encode("</w:body></w:document>");
  const paragraph = "<w:p><w:r><w:t>All work and no play makes Jack a dull boy.</w:t></w:r></w:p>";
  const chunk = encoder.encode(paragraph.repeat(Math.floor(1_048_576 / paragraph.length)));
  const flush = { level: 9, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  const parts: Uint8Array[] = [zlib.deflateRawSync(head, flush)];
  const chunkDeflated = zlib.deflateRawSync(chunk, flush);
  let crc = zlib.crc32(head);
  const repeats = Math.max(1, Math.round(megabytes * 1_000_000 / chunk.length));
  for (let i = 0; i < repeats; i++) {
    parts.push(chunkDeflated);
    crc = zlib.crc32(chunk, crc);
  }
  parts.push(zlib.deflateRawSync(tail));
  crc = zlib.crc32(tail, crc);
  const xmlBytes = head.length + repeats * chunk.length + tail.length;
  const documentXml = { name: "word/document.xml", deflated: concat(parts), size: xmlBytes, crc };
  return { bytes: zip([...wordParts(), documentXml]), xmlBytes };
}

/** A short Word document's own parts: content types, relationships and one paragraph. */
function memoParts(): Entry[] {
  return [
    ...wordParts(),
    small(
      "word/document.xml",
      '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>' +
        "<w:p><w:r><w:t>A short memo between many padding parts.</w:t></w:r></w:p></w:body></w:document>",
    ),
  ];
}

/** How many bytes the memo's own parts expand to. */
export const WORD_PARTS_BYTES: number = memoParts().reduce((n, part) => n + part.size, 0);

/**
 * A real Word file of one paragraph whose parts expand to exactly `totalBytes`
 * bytes: beside the memo's own parts, padding parts of `partBytes` bytes each
 * (repeated XML, deflated once and stored many times) and one for the rest. The
 * file stays small: 500 MB of parts make about 2 MB.
 */
export function buildPaddedDocx(totalBytes: number, partBytes = 1_000_000): Uint8Array {
  const filler = "<pad>All work and no play makes Jack a dull boy.</pad>";
  const part = (bytes: number) => {
    const data = encoder.encode(filler.repeat(Math.ceil(bytes / filler.length)).slice(0, bytes));
    return { deflated: zlib.deflateRawSync(data, { level: 9 }), size: data.length, crc: zlib.crc32(data) };
  };
  const padding = totalBytes - WORD_PARTS_BYTES;
  if (padding < 0) throw new Error(`A padded Word file holds at least ${WORD_PARTS_BYTES} bytes`);
  const full = part(partBytes);
  const entries = memoParts();
  for (let i = 0; i < Math.floor(padding / partBytes); i++) {
    entries.push({ name: `customXml/pad${i}.xml`, ...full });
  }
  if (padding % partBytes > 0) entries.push({ name: "customXml/rest.xml", ...part(padding % partBytes) });
  return zip(entries);
}

function small(name: string, text: string): Entry {
  const data = encoder.encode(text);
  return { name, deflated: zlib.deflateRawSync(data), size: data.length, crc: zlib.crc32(data) };
}

/** A Word file's content types and relationships, pointing at `word/document.xml`. */
function wordParts(): Entry[] {
  return [
    small(
      "[Content_Types].xml",
      '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
        '<Default Extension="xml" ContentType="application/xml"/>' +
        '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
    ),
    small(
      "_rels/.rels",
      '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
        '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>',
    ),
  ];
}

interface Entry {
  name: string;
  deflated: Uint8Array;
  size: number;
  crc: number;
}

function zip(entries: Entry[]): Uint8Array {
  const locals: Uint8Array[] = [];
  const centrals: Uint8Array[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = encoder.encode(entry.name);
    const local = new DataView(new ArrayBuffer(30));
    local.setUint32(0, 0x04034b50, true);
    local.setUint16(4, 20, true);
    local.setUint16(8, 8, true);
    local.setUint32(14, entry.crc >>> 0, true);
    local.setUint32(18, entry.deflated.length, true);
    local.setUint32(22, entry.size, true);
    local.setUint16(26, name.length, true);
    const central = new DataView(new ArrayBuffer(46));
    central.setUint32(0, 0x02014b50, true);
    central.setUint16(4, 20, true);
    central.setUint16(6, 20, true);
    central.setUint16(10, 8, true);
    central.setUint32(16, entry.crc >>> 0, true);
    central.setUint32(20, entry.deflated.length, true);
    central.setUint32(24, entry.size, true);
    central.setUint16(28, name.length, true);
    central.setUint32(42, offset, true);
    locals.push(new Uint8Array(local.buffer), name, entry.deflated);
    centrals.push(new Uint8Array(central.buffer), name);
    offset += 30 + name.length + entry.deflated.length;
  }
  const directory = concat(centrals);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, entries.length, true);
  end.setUint16(10, entries.length, true);
  end.setUint32(12, directory.length, true);
  end.setUint32(16, offset, true);
  return concat([...locals, directory, new Uint8Array(end.buffer)]);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}
