import * as v from "valibot";
import { nullableText, timestampOut } from "../resource";

/**
 * `peppolDelivery` of invoices and credit notes (API.md section 19): null until sent with
 * `channel: "peppol"`; then the hand-over's state, `error` the provider's reason when it failed.
 */
export const PeppolDeliveryOut = v.pipe(
  v.nullable(
    v.strictObject({
      status: v.picklist(["pending", "delivered", "failed"]),
      providerReference: nullableText,
      error: nullableText,
      updatedAt: timestampOut,
    }),
  ),
  v.description('Null until sent with channel "peppol"; then its delivery over the Peppol network'),
);

/** The registration of the business at the access point provider (PUT /profile/peppol-registration). */
export const PeppolRegistrationOut = v.strictObject({
  peppolId: v.string(),
  status: v.picklist(["pending", "active"]),
  updatedAt: timestampOut,
});
