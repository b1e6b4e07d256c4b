import type { Address } from "../address/resource";
import type { LineItem } from "./resource";

/**
 * What every invoice and estimate item has and editing touches (documents/editing.ts): a type of
 * its own, below the editing use cases, so the kinds' models (estimates/model.ts) build on it
 * without importing them.
 */
export interface DocumentItem {
  pk: string;
  sk: string;
  id: number;
  status: string;
  version: number;
  clientId: number;
  clientName: string;
  clientEmail: string | null;
  clientAddress: Address | null;
  clientTaxId: string | null;
  lineItems: LineItem[];
  /** The id the next new line gets: line ids are never reused within a document. */
  nextLineId: number;
  subtotal: string;
  taxTotal: string;
  total: string;
  updatedAt: string;
}
