/**
 * Upload type detection by content, never by file name or declared type (DECISIONS §6): a PDF
 * starts with the `%PDF-` magic bytes; plain text is valid UTF-8 without a NUL byte. The sniffer
 * is fed chunk by chunk while the upload streams, so the route can stop reading as soon as the
 * content cannot be accepted, and never needs the whole file in memory to decide.
 */

export type SupportedType = 'application/pdf' | 'text/plain';

/** `empty` for a zero-byte upload (answered 422); `null` for anything unsupported (415). */
export type SniffResult = SupportedType | 'empty' | null;

const PDF_MAGIC = Buffer.from('%PDF-', 'latin1');

export class ContentSniffer {
  /** The first bytes, kept only until the PDF magic can be confirmed or ruled out. */
  #head = Buffer.alloc(0);
  #pdf: boolean | undefined = undefined;
  #text = true;
  #bytes = 0;
  #finished = false;
  // fatal: a malformed sequence throws; stream: a character split across chunks is carried over.
  readonly #decoder = new TextDecoder('utf-8', { fatal: true });

  /** Feeds the next chunk of the upload, in order. */
  push(chunk: Uint8Array): void {
    if (this.#finished) throw new Error('ContentSniffer.push after finish');
    if (chunk.length === 0) return;
    this.#bytes += chunk.length;
    if (this.#pdf === undefined) this.#checkHead(chunk);
    // Once the magic is confirmed, the rest of a PDF is the parser's business, not ours.
    if (this.#pdf === true || !this.#text) return;
    this.#checkText(chunk);
  }

  /**
   * True once the content can no longer be PDF or text: the caller may stop reading and reject.
   * Never true for a PDF, whatever follows its magic bytes.
   */
  get unsupported(): boolean {
    return this.#pdf === false && !this.#text;
  }

  /** The verdict after the last chunk. Checks that the text did not end mid-character. */
  finish(): SniffResult {
    if (!this.#finished) {
      this.#finished = true;
      if (this.#pdf === undefined) this.#pdf = false; // fewer bytes than the magic
      if (!this.#pdf && this.#text) this.#flushText();
    }
    if (this.#bytes === 0) return 'empty';
    if (this.#pdf) return 'application/pdf';
    return this.#text ? 'text/plain' : null;
  }

  #checkHead(chunk: Uint8Array): void {
    const need = PDF_MAGIC.length - this.#head.length;
    this.#head = Buffer.concat([this.#head, chunk.subarray(0, need)]);
    const seen = this.#head.length;
    if (!this.#head.equals(PDF_MAGIC.subarray(0, seen))) this.#pdf = false;
    else if (seen === PDF_MAGIC.length) this.#pdf = true;
    if (this.#pdf !== undefined) this.#head = Buffer.alloc(0);
  }

  #checkText(chunk: Uint8Array): void {
    if (chunk.includes(0)) {
      this.#text = false;
      return;
    }
    try {
      this.#decoder.decode(chunk, { stream: true });
    } catch {
      this.#text = false;
    }
  }

  #flushText(): void {
    try {
      this.#decoder.decode(); // throws if the input ended inside a multi-byte character
    } catch {
      this.#text = false;
    }
  }
}

/** Convenience for content already in memory. */
export function sniffContentType(bytes: Uint8Array): SniffResult {
  const sniffer = new ContentSniffer();
  sniffer.push(bytes);
  return sniffer.finish();
}
