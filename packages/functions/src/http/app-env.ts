import type { Ctx, Deps } from "@invoicing/core/deps";
import type { WriteEInvoice } from "../einvoice/write-einvoice";
import type { RenderPdf } from "../pdf/document-pdf";

/**
 * Hono's per-request variables, typed once for every module. The last three are what only a
 * route's response uses, given by the apps that serve it; what core's use cases call is in `deps`
 * (docs/routes.md says why two mechanisms remain).
 */
export interface AppEnv {
  Variables: {
    requestId: string;
    deps: Deps;
    /** The acting user's context; set by the auth middleware on authenticated routes. */
    ctx: Ctx;
    /** Resolves once the API key is checked and allows the request (see middleware.ts verifiedKey). */
    keyCheck?: () => Promise<void>;
    /** The raw request body, once read (see body.ts). */
    rawBody?: string;
    /** The request body's bytes, once read (see body.ts). */
    bodyBytes?: Uint8Array;
    /** Draws PDFs, in the apps that serve them (http/pdf-renderer.ts). */
    renderPdf?: RenderPdf;
    /** GET /openapi.json's document, in the apps that serve it (app/openapi-source.ts). */
    openApiJson?: () => Promise<string>;
    /** Writes e-invoices, in the apps that serve them (http/einvoice-writer.ts). */
    writeEInvoice?: WriteEInvoice;
  };
}
