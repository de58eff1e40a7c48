/**
 * The named thresholds of the Basic preset: when a page is marked (*to view*), how pages
 * are estimated, and the limits that keep hostile files from exhausting the reader.
 * Each value says why it has that value; they were tuned on `corpus/` (see
 * `test/processing/`), where chart slides, pictures and scanned pages must be marked
 * and text-only pages must not.
 *
 * @module
 */

// --- PDF marks -------------------------------------------------------------------------

/**
 * A PDF page with fewer characters than this is "little text": a scanned page, a picture
 * page, or a chart whose labels are drawn as paths. 25 characters is less than a short
 * slide title plus one bullet, so sparse text-only slides (a title and a line) stay
 * unmarked, while a photo page with only a caption number is marked.
 */
export const PDF_LITTLE_TEXT_CHARS = 25;

/**
 * A picture is "large" when its placed area covers at least this fraction of the page.
 * 0.12 (about a quarter of the page width times half its height) catches figures, charts
 * saved as pictures and photos, while logos, icons, bullets and signatures (typically
 * under 3% of a page) stay below it.
 */
export const PDF_LARGE_PICTURE_FRACTION = 0.12;

/**
 * A picture covering at least this fraction of the page is a page background (a slide
 * template, a letterhead) when the page shows visible text over it: the Keynote and
 * Google Slides exports in the corpus put a full-page picture behind every text slide.
 * When the text over it is invisible (render mode 3, an OCR layer) it is a scanned page
 * and is marked; with little or no text it is marked by {@link PDF_LITTLE_TEXT_CHARS}.
 */
export const PDF_BACKGROUND_PICTURE_FRACTION = 0.9;

/**
 * A page that paints at least this many vector paths holds a drawing: a chart, a diagram,
 * a map or a ruled table. Text pages paint a handful (rules, underlines, boxes); chart
 * pages in the corpus paint from about 60 paths upward.
 */
export const PDF_MANY_PATHS = 60;

/**
 * Paths smaller than this fraction of the page's shorter side in both directions are
 * not counted: they are glyph-like specks (bullets, check boxes, dots of dotted leaders).
 */
export const PDF_TINY_PATH_FRACTION = 0.004;

// --- PowerPoint marks ------------------------------------------------------------------

/**
 * A slide holding at least this many drawn shapes without text (rectangles, arrows,
 * lines, connectors, freeforms) is a diagram drawn with shapes. Text-only slides use
 * zero to three decorative shapes; the diagrams in the corpus use six or more.
 */
export const PPTX_MANY_SHAPES = 6;

/** A slide with at least this many connectors (`p:cxnSp`) is a diagram, even with few other shapes. */
export const PPTX_MANY_CONNECTORS = 2;

// --- Estimated pages (Word, text) --------------------------------------------------------

/**
 * Characters per estimated page: a printed A4/Letter page of 11–12 pt body text holds
 * about 3,000 characters including spaces (about 500 words).
 */
export const CHARS_PER_PAGE = 3000;

// --- Limits for hostile files ----------------------------------------------------------

/** PDFs claiming more pages than this are refused: no real document in scope comes close. */
export const MAX_PDF_PAGES = 5000;

/**
 * A page whose operator list is longer than this is not analysed further and is marked
 * (it is a dense drawing); text is still kept. Typical text pages have a few thousand ops.
 */
export const MAX_OPS_PER_PAGE = 2_000_000;

/** Zip packages with more entries than this are refused (real decks have a few hundred). */
export const MAX_ZIP_ENTRIES = 10_000;

/** Zip packages whose declared uncompressed size exceeds this are refused. */
export const MAX_ZIP_TOTAL_BYTES = 500_000_000;

/** A single zip entry may not declare more than this uncompressed size. */
export const MAX_ZIP_ENTRY_BYTES = 200_000_000;

/**
 * An entry above 1 MB that expands more than this many times is a zip bomb: XML
 * compresses 5–30 times, deliberately crafted bombs hundreds to millions of times.
 */
export const MAX_ZIP_RATIO = 200;

/** Text files above this size are refused rather than split into thousands of pages. */
export const MAX_TEXT_BYTES = 200_000_000;

/**
 * Pictures smaller than this fraction of the slide (icons, bullets, small logos) do not
 * mark a slide; 2% is about a 3 × 2 cm picture on a 16:9 slide.
 */
export const PPTX_MIN_PICTURE_FRACTION = 0.02;

/** The area of a Letter page in EMU² (8.5 × 11 in), the page a Word picture's size is compared with. */
export const WORD_PAGE_AREA_EMU2 = 8.5 * 914_400 * 11 * 914_400;
