import { randomBytes } from "node:crypto";

/** Public page tokens: 192 random bits, URL-safe (base64url, 32 characters). */
export const newPublicToken = (): string => randomBytes(24).toString("base64url");
export const PUBLIC_TOKEN_SHAPE = /^[A-Za-z0-9_-]{32}$/;
