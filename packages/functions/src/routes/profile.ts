import { Hono } from "hono";
import { etagOf } from "@invoicing/core/db/versioning";
import type { ImageType } from "@invoicing/core/profile/image";
import { deleteLogo, getLogo, putLogo } from "@invoicing/core/profile/logo";
import { getProfile, toProfile } from "@invoicing/core/profile/profile";
import { updateProfile } from "@invoicing/core/profile/update";
import type { AppEnv } from "../http/app-env";
import { describe, one } from "../http/describe";
import { updateProfileBody } from "../schemas/profile";
import { Profile } from "../schemas/resources";
import { binaryBody, ifMatch, jsonBody } from "../http/validators";

/** The business profile and its logo (docs/documents.md). */
const IMAGE_TYPES: readonly ImageType[] = ["image/png", "image/jpeg"];

export const profile = new Hono<AppEnv>()
  .get(
    "/profile",
    describe({
      operationId: "getProfile",
      tag: "Profile",
      summary: "Get the business profile",
      description: "Every user has one: all nulls and the defaults (USD, 30 days) until first changed.",
      success: one(Profile, "The profile."),
    }),
    async (c) => {
      const item = await getProfile(c.get("ctx"));
      return c.json(toProfile(item), 200, { ETag: etagOf(item.version) });
    },
  )
  .patch(
    "/profile",
    describe({
      operationId: "updateProfile",
      tag: "Profile",
      summary: "Change the business profile",
      description:
        "`null` clears a field; an address or bank account is replaced whole; `{}` changes nothing. " +
        "The IBAN is checked (country, length, check digits) and stored without spaces, uppercase.",
      success: one(Profile, "The updated profile."),
    }),
    ifMatch,
    jsonBody(updateProfileBody),
    async (c) => {
      const item = await updateProfile(c.get("ctx"), c.req.valid("json"), c.req.valid("header")["if-match"]);
      return c.json(toProfile(item), 200, { ETag: etagOf(item.version) });
    },
  )
  .put(
    "/profile/logo",
    describe({
      operationId: "putProfileLogo",
      tag: "Profile",
      summary: "Upload the logo",
      description:
        "The body is the image itself: a PNG or JPEG of at most 2000 × 2000 pixels, checked by its bytes " +
        "(else 400), and 256 KiB (413). Another content type is 415.",
      success: { status: 204, description: "Stored; `hasLogo` is true." },
      problems: ["validation_error"],
    }),
    binaryBody(IMAGE_TYPES),
    async (c) => {
      const type = c.req.header("content-type")!.split(";")[0]!.trim().toLowerCase() as ImageType;
      await putLogo(c.get("ctx"), c.get("bodyBytes")!, type);
      return c.body(null, 204);
    },
  )
  .get(
    "/profile/logo",
    describe({
      operationId: "getProfileLogo",
      tag: "Profile",
      summary: "Download the logo",
      success: {
        status: 200,
        description: "The image, with its content type (image/png or image/jpeg).",
        mediaType: "image/png",
      },
      problems: ["not_found"],
    }),
    async (c) => {
      const logo = await getLogo(c.get("ctx"));
      return c.body(logo.bytes as Uint8Array<ArrayBuffer>, 200, {
        "Content-Type": logo.contentType,
        "X-Content-Type-Options": "nosniff",
        "Cache-Control": "no-store",
      });
    },
  )
  .delete(
    "/profile/logo",
    describe({
      operationId: "deleteProfileLogo",
      tag: "Profile",
      summary: "Remove the logo",
      success: { status: 204, description: "Removed (also when there was none)." },
    }),
    async (c) => {
      await deleteLogo(c.get("ctx"));
      return c.body(null, 204);
    },
  );
