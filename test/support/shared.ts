import { existsSync } from "node:fs";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

/**
 * Finds a file of the team's shared folder (API.md, the official e-invoice artefacts), which lives
 * beside the repository, never in it. In this order: the path an environment variable names (a
 * developer's own copy); `shared/<relative>` beside the repository (a clone at <dir>/<repo> finds
 * <dir>/shared, wherever CI put it); the machine's /work/shared copy.
 */
export function findShared(relative: string, override?: string): { path: string | null; tried: string[] } {
  if (override) return { path: resolve(override), tried: [override] };
  const tried = [resolve(ROOT, "../shared", relative), resolve("/work/shared", relative)];
  return { path: tried.find((p) => existsSync(p)) ?? null, tried };
}
