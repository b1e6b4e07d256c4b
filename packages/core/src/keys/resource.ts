import * as v from "valibot";
import { idOut, nullableText, timestampOut } from "../resource";

/** The API key response shapes (see ../resource.ts). */
export const ApiKey = v.strictObject({
  id: idOut,
  name: nullableText,
  prefix: v.pipe(v.string(), v.description("The key's first characters, to recognise it")),
  createdAt: timestampOut,
  lastUsedAt: v.nullable(timestampOut),
});
export type ApiKey = v.InferOutput<typeof ApiKey>;

/** The answer to a create: the key itself, shown only then. */
export const CreatedApiKey = v.strictObject({
  id: idOut,
  name: nullableText,
  key: v.pipe(
    v.string(),
    v.minLength(20),
    v.description("The secret: shown only in this response, stored only as a hash"),
  ),
  prefix: v.string(),
  createdAt: timestampOut,
});
export type CreatedApiKey = v.InferOutput<typeof CreatedApiKey>;
