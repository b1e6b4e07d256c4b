/**
 * What an e-invoice is written from: the public Invoice resource as the API returns it (money as
 * two-decimal strings, `seller` the profile snapshot taken at finalize, the client's copies), plus
 * the pay link when a card processor is configured. The writer depends on this shape only, never
 * on the stored item, so it reads exactly what the user sees on GET /invoices/{id}.
 */
export type TaxCategory =
  | "standard"
  | "zero_rated"
  | "exempt"
  | "reverse_charge"
  | "intra_community"
  | "export"
  | "outside_scope";

export interface Address {
  line1: string | null;
  line2: string | null;
  city: string | null;
  postalCode: string | null;
  region: string | null;
  country: string;
}

export interface BankAccount {
  accountName: string | null;
  iban: string;
  bic: string | null;
}

/** The business profile as copied onto the invoice at finalize. */
export interface Seller {
  businessName: string | null;
  legalName: string | null;
  address: Address | null;
  taxId: string | null;
  companyId: string | null;
  contactName: string | null;
  email: string | null;
  phone: string | null;
  website: string | null;
  bankAccount: BankAccount | null;
  footer: string | null;
}

export interface SourceLine {
  id: number;
  description: string;
  quantity: string;
  unitPrice: string;
  taxRate: string;
  amount: string;
  taxCategory: TaxCategory;
  sortOrder: number;
}

export interface TaxBreakdownEntry {
  taxCategory: TaxCategory;
  taxRate: string;
  taxableAmount: string;
  taxAmount: string;
}

export interface EInvoiceSource {
  invoiceNumber: string | null;
  status: string;
  currency: string;
  issueDate: string | null;
  dueDate: string | null;
  deliveryDate: string | null;
  notes: string | null;
  terms: string | null;
  buyerReference: string | null;
  purchaseOrderReference: string | null;
  taxExemptionReason: string | null;
  subtotal: string;
  taxTotal: string;
  total: string;
  amountPaid: string;
  amountDue: string;
  clientName: string;
  clientEmail: string | null;
  clientAddress: Address | null;
  clientTaxId: string | null;
  seller: Seller | null;
  lineItems: SourceLine[];
  taxBreakdown: TaxBreakdownEntry[];
  /** The link that opens a card payment (the invoice's pay link), when a card processor is set. */
  payLink?: string | null;
}

export const E_INVOICE_FORMATS = ["ubl", "cii", "xrechnung", "facturx"] as const;
export type EInvoiceFormat = (typeof E_INVOICE_FORMATS)[number];
