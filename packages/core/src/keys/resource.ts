import * as v from "valibot";
import { idOut, nullableText, timestampOut } from "../resource";

/** What a key may do: `full`, or `read_only` (GET and HEAD only; anything else is 403). */
export const KEY_SCOPES = ["full", "read_only"] as const;
export type KeyScope = (typeof KEY_SCOPES)[number];
const scope = v.pipe(
  v.picklist(KEY_SCOPES),
  v.description("`full`, or `read_only`: GET and HEAD only, any other method is 403 insufficient_scope"),
);
const expiresAt = v.pipe(
  v.nullable(timestampOut),
  v.description("When the key stops working (401 from then on); null: never"),
);

/** The API key response shapes (see ../resource.ts). */
export const ApiKey = v.strictObject({
  id: idOut,
  name: nullableText,
  scope,
  expiresAt,
  prefix: v.pipe(v.string(), v.description("The key's first characters, to recognise it")),
  createdAt: timestampOut,
  lastUsedAt: v.nullable(timestampOut),
});
export type ApiKey = v.InferOutput<typeof ApiKey>;

/** The answer to a create: the key itself, shown only then. */
export const CreatedApiKey = v.strictObject({
  id: idOut,
  name: nullableText,
  scope,
  expiresAt,
  key: v.pipe(
    v.string(),
    v.minLength(20),
    v.description("The secret: shown only in this response, stored only as a hash"),
  ),
  prefix: v.string(),
  createdAt: timestampOut,
});
export type CreatedApiKey = v.InferOutput<typeof CreatedApiKey>;
