/**
 * The public shape of a stored document: exactly the listed fields, each always present, `null`
 * where there is no value — storage attributes (keys, version, …) never leak.
 */
export function toResource<R>(item: object, fields: readonly (keyof R & string)[]): R {
  const stored = item as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const field of fields) out[field] = stored[field] ?? null;
  return out as R;
}
