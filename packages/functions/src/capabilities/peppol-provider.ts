import { createStorecoveProvider } from "@invoicing/core/peppol/storecove";
import type { Capability } from "./create-deps";

/**
 * Peppol delivery (docs/peppol.md): the access point provider the operator configured —
 * PEPPOL_PROVIDER=storecove with STORECOVE_API_KEY (deployed: the linked secret StorecoveApiKey)
 * and STORECOVE_API_BASE (another server: a stand-in). `fetch` only: light enough for the API
 * function, which checks a send (the receiver lookup) and registers businesses. What hands documents
 * over carries the UBL writer too (peppol-hand-over.ts).
 */
export const peppolProvider: Capability = (config, env) => {
  const key = config.storecoveApiKey;
  if (config.peppolProvider !== "storecove" || !key) return {};
  return { peppol: createStorecoveProvider({ apiKey: key, apiBase: env.STORECOVE_API_BASE || undefined }) };
};
