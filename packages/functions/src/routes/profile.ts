import { Hono } from "hono";
import { etagOf } from "@invoicing/core/db/versioning";
import type { ImageType } from "@invoicing/core/profile/image";
import { deleteLogo, getLogo, putLogo } from "@invoicing/core/profile/logo";
import { getProfile, toProfile, updateProfile } from "@invoicing/core/profile/profile";
import { readBodyBytes, readJson } from "../body";
import type { AppEnv } from "../env";
import { ifMatch } from "../params";
import { HttpProblem } from "../problems";
import { updateProfileBody } from "../schemas/profile";
import { validate } from "../validation";

/** The business profile and its logo (docs/profile.md). */
const IMAGE_TYPES: readonly ImageType[] = ["image/png", "image/jpeg"];

export const profile = new Hono<AppEnv>()
  .get("/profile", async (c) => {
    const item = await getProfile(c.get("ctx"));
    return c.json(toProfile(item), 200, { ETag: etagOf(item.version) });
  })
  .patch("/profile", async (c) => {
    const body = validate(updateProfileBody, await readJson(c));
    const item = await updateProfile(c.get("ctx"), body, ifMatch(c));
    return c.json(toProfile(item), 200, { ETag: etagOf(item.version) });
  })
  .put("/profile/logo", async (c) => {
    // 413 before 415: the size is known from the body alone, whatever it claims to be.
    const bytes = await readBodyBytes(c);
    const type = (c.req.header("content-type") ?? "").split(";")[0]!.trim().toLowerCase() as ImageType;
    if (!IMAGE_TYPES.includes(type)) {
      throw new HttpProblem("unsupported_media_type", "a logo must be sent as image/png or image/jpeg");
    }
    await putLogo(c.get("ctx"), bytes, type);
    return c.body(null, 204);
  })
  .get("/profile/logo", async (c) => {
    const logo = await getLogo(c.get("ctx"));
    return c.body(logo.bytes as Uint8Array<ArrayBuffer>, 200, {
      "Content-Type": logo.contentType,
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "no-store",
    });
  })
  .delete("/profile/logo", async (c) => {
    await deleteLogo(c.get("ctx"));
    return c.body(null, 204);
  });
