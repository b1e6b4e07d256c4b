/**
 * The font files an archival PDF embeds (fonts.ts says why these), named apart from the code that
 * reads them so that infra/api.ts can copy them next to the Documents function without importing
 * pdf-lib.
 */
export const EMBEDDED_FONT_PACKAGE = "@fontsource/arimo";
export const EMBEDDED_FONT_FILES = {
  regular: "files/arimo-latin-400-normal.woff",
  bold: "files/arimo-latin-700-normal.woff",
  italic: "files/arimo-latin-400-italic.woff",
} as const;
