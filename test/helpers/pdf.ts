import PDFDocument from 'pdfkit';

/**
 * PDFs generated with pdfkit for tests and benchmarks, so no binary fixture is checked in and each
 * test states the content it relies on.
 */

export type PdfBlock = { heading: string } | { paragraph: string };

/** Renders a document to a Buffer; `draw` lays out the content, adding pages as it needs. */
async function render(
  draw: (doc: PDFKit.PDFDocument) => void,
  options: PDFKit.PDFDocumentOptions = {},
): Promise<Buffer> {
  const doc = new PDFDocument({ autoFirstPage: false, ...options });
  const parts: Buffer[] = [];
  doc.on('data', (part: Buffer) => parts.push(part));
  const ended = new Promise<Buffer>((resolve, reject) => {
    doc.on('end', () => {
      resolve(Buffer.concat(parts));
    });
    doc.on('error', reject);
  });
  draw(doc);
  doc.end();
  return ended;
}

function drawBlocks(doc: PDFKit.PDFDocument, blocks: PdfBlock[]): void {
  for (const block of blocks) {
    if ('heading' in block) {
      doc.font('Helvetica-Bold').fontSize(16).text(block.heading).moveDown(0.5);
    } else {
      doc.font('Helvetica').fontSize(11).text(block.paragraph, { align: 'left' }).moveDown();
    }
  }
}

/**
 * One PDF page per entry of `pages` (headings in bold 16 pt, paragraphs in 11 pt with a blank line
 * after each). A page whose content overflows continues on extra pages, as pdfkit lays it out.
 */
export function pdfFromPages(pages: PdfBlock[][], options: PDFKit.PDFDocumentOptions = {}) {
  return render((doc) => {
    for (const blocks of pages) {
      doc.addPage();
      drawBlocks(doc, blocks);
    }
  }, options);
}

/** A one-page PDF that opens only with the password `secret`. */
export function encryptedPdf(): Promise<Buffer> {
  return pdfFromPages([[{ paragraph: 'Confidential dosing table.' }]], {
    userPassword: 'secret',
    ownerPassword: 'owner-secret',
    pdfVersion: '1.7',
  });
}

/** Starts with valid PDF magic, then garbage: no parser can recover a document from it. */
export async function corruptPdf(): Promise<Buffer> {
  const valid = await pdfFromPages([[{ paragraph: 'This text will be destroyed.' }]]);
  const bytes = Buffer.from(valid);
  // Deterministic garbage (a linear congruential sequence) over everything after the header.
  let state = 7;
  for (let i = 9; i < bytes.length; i++) {
    state = (state * 1103515245 + 12345) % 2147483648;
    bytes[i] = state % 256;
  }
  return bytes;
}

/** Two pages with only vector drawings, like a scanned or image-only document: no text at all. */
export function textlessPdf(): Promise<Buffer> {
  return render((doc) => {
    doc.addPage();
    doc.rect(72, 72, 200, 100).fill('#336699');
    doc.circle(300, 400, 50).stroke();
    doc.addPage();
    doc.moveTo(72, 72).lineTo(400, 500).stroke();
  });
}

const SENTENCES = [
  'Hypertension is diagnosed when clinic blood pressure is 140/90 mmHg or higher on repeated measurement.',
  'Offer ambulatory monitoring to confirm the diagnosis, e.g. when readings vary between visits.',
  'Start an ACE inhibitor or an angiotensin receptor blocker in adults with type 2 diabetes.',
  'Check serum potassium and eGFR within 2 weeks of starting treatment and after each dose change.',
  'Amlodipine 5 mg once daily is a reasonable first choice for people of Black African origin.',
  'Review the target of 135/85 mmHg at least annually, and sooner if symptoms change.',
];

/** Deterministic clinical-sounding text for page `page`, about `sentences` sentences long. */
export function sampleParagraph(page: number, sentences = 6): string {
  return Array.from(
    { length: sentences },
    (_, i) => SENTENCES[(page + i) % SENTENCES.length] ?? '',
  ).join(' ');
}

const TOPICS = ['Diagnosis', 'Treatment', 'Monitoring', 'Referral', 'Special Populations'];

/** `pageCount` pages, each with a numbered heading and three paragraphs (about 1,500 characters). */
export function largePdf(pageCount = 200): Promise<Buffer> {
  const pages = Array.from({ length: pageCount }, (_, i): PdfBlock[] => [
    // Topics vary from page to page: a line repeated at the top of most pages is a running header.
    { heading: `${i + 1}.1 ${TOPICS[i % TOPICS.length] ?? ''}` },
    { paragraph: sampleParagraph(i) },
    { paragraph: sampleParagraph(i + 1) },
    { paragraph: sampleParagraph(i + 2, 4) },
  ]);
  return pdfFromPages(pages);
}
