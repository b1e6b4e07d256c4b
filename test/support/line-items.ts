/**
 * The contract's worked example of a line item, 3 × 19.99 at 8.25% tax, for the tests that need
 * "a line" and check what the API makes of it. Written out by hand (not computed with core's
 * money code) so that it stays an independent check of the rounding: 3 × 19.99 = 59.97, tax
 * 59.97 × 0.0825 = 4.947525 → 4.95, total 64.92.
 */
export const WIDGET = { description: "Widget", quantity: "3", unitPrice: "19.99", taxRate: "0.0825" };

/** WIDGET as the API gives it back (every field; the category from its rate), with its place in the document. */
export const widgetLine = (place: { id?: number; description?: string; sortOrder?: number } = {}) => ({
  id: 1,
  description: WIDGET.description,
  quantity: "3.00",
  unitPrice: "19.99",
  taxRate: "0.0825",
  taxCategory: "standard",
  amount: "59.97",
  sortOrder: 0,
  ...place,
});

/** The totals of a document whose only line is WIDGET. */
export const WIDGET_TOTALS = { subtotal: "59.97", taxTotal: "4.95", total: "64.92" };
