import { GetCommand } from "@aws-sdk/lib-dynamodb";
import type { Ctx, Deps } from "../deps";
import { nowIso } from "../deps";
import { commit, type Write } from "../db/commit";
import { userPk } from "../db/keys";
import { ValidationError, notFound } from "../errors";
import { inspectImage, type ImageType, type Logo } from "./image";
import { flattenedLogo, flattenPng } from "./png-flatten";
import { profileKey } from "./profile";

/**
 * The profile's logo. Stored in the table itself, as one binary attribute of its own item
 * (sk BUSINESS_PROFILE#LOGO): at most 256 KiB fits well under DynamoDB's 400 KB item limit, needs no bucket,
 * no second store to keep consistent and no extra IAM grant, and the item is read only when a
 * document is drawn (the profile item carries `hasLogo` instead). See docs/documents.md.
 */
const MAX_LOGO_PIXELS = 2000;
/** DynamoDB's item size limit (400 KB). */
const MAX_ITEM_BYTES = 400_000;

export const logoKey = (userId: string) => ({ pk: userPk(userId), sk: "BUSINESS_PROFILE#LOGO" });

/** The writes that mark the profile as having (or not having) a logo, bumping its version. */
function hasLogoWrite(ctx: Ctx, hasLogo: boolean): Write {
  return {
    op: {
      Update: {
        TableName: ctx.db.table,
        Key: profileKey(ctx.userId),
        UpdateExpression: "SET hasLogo = :has, updatedAt = :now ADD #version :one",
        ExpressionAttributeNames: { "#version": "version" },
        ExpressionAttributeValues: { ":has": hasLogo, ":now": nowIso(ctx), ":one": 1 },
      },
    },
  };
}

/** PUT /profile/logo: checks the bytes (type, integrity, ≤ 2000 × 2000), then stores them. */
export async function putLogo(ctx: Ctx, bytes: Uint8Array, contentType: ImageType): Promise<void> {
  const check = inspectImage(bytes, contentType, MAX_LOGO_PIXELS);
  if (!check.ok) throw new ValidationError([{ path: "", message: `the body ${check.reason}` }]);
  const { width, height } = check.image;
  // What documents draw: a PNG flattened once here (profile/png-flatten.ts), not on every PDF. The
  // copy shares the item with the original (≤ 256 KiB), so it is made to fit what is left of 400 KB.
  const forDocuments = contentType === "image/png" ? documentCopyOf(bytes) : undefined;
  const documentCopy = forDocuments
    ? { documentBytes: forDocuments.bytes, documentWidth: forDocuments.width, documentHeight: forDocuments.height }
    : {};
  const item = { ...logoKey(ctx.userId), contentType, bytes, width, height, ...documentCopy };
  await commit(ctx, [{ op: { Put: { TableName: ctx.db.table, Item: item } } }, hasLogoWrite(ctx, true)]);
}

/**
 * The flattened copy of a PNG the checks accepted. The checks read chunks, CRCs and the image data's
 * length, not every ancillary chunk's body: one the flattening cannot read (a greyscale PNG's 1-byte
 * `tRNS` where the spec says 2) is a damaged image, a 400 on the body like the checks' own refusals.
 */
function documentCopyOf(bytes: Uint8Array) {
  try {
    return flattenPng(bytes, (flat) => flat.bytes.length <= MAX_ITEM_BYTES - bytes.length - 1024);
  } catch {
    throw new ValidationError([{ path: "", message: "the body is a damaged PNG image (a chunk cannot be read)" }]);
  }
}

async function findLogo(deps: Pick<Deps, "db">, userId: string): Promise<Logo | undefined> {
  const out = await deps.db.doc.send(new GetCommand({ TableName: deps.db.table, Key: logoKey(userId) }));
  if (!out.Item) return undefined;
  const item = out.Item;
  return { contentType: item.contentType, bytes: item.bytes as Uint8Array, width: item.width, height: item.height };
}

export async function getLogo(ctx: Ctx): Promise<Logo> {
  const logo = await findLogo(ctx, ctx.userId);
  if (!logo) throw notFound("logo");
  return logo;
}

/**
 * The logo as documents draw it (page, PDF, email attachment): the flattened copy made at upload; a
 * PNG stored before copies were made is flattened at its first use in this container (cached); a
 * JPEG as stored (a PDF embeds JPEG bytes as they are, without decoding them).
 */
export function documentLogo(item: Record<string, unknown>): Logo {
  if (item.documentBytes) {
    return {
      contentType: "image/png",
      bytes: item.documentBytes as Uint8Array,
      width: Number(item.documentWidth),
      height: Number(item.documentHeight),
    };
  }
  const original: Logo = {
    contentType: item.contentType as Logo["contentType"],
    bytes: item.bytes as Uint8Array,
    width: Number(item.width),
    height: Number(item.height),
  };
  if (original.contentType !== "image/png") return original;
  const flat = flattenedLogo(original.bytes);
  return { contentType: "image/png", bytes: flat.bytes, width: flat.width, height: flat.height };
}

/** DELETE /profile/logo: idempotent (no logo is not an error: the result is the same). */
export async function deleteLogo(ctx: Ctx): Promise<void> {
  await commit(ctx, [
    { op: { Delete: { TableName: ctx.db.table, Key: logoKey(ctx.userId) } } },
    hasLogoWrite(ctx, false),
  ]);
}
