import type { Deps } from "@invoicing/core/context";
import { createBaseDeps } from "@invoicing/functions/capabilities/base";
import { cardProcessor } from "@invoicing/functions/capabilities/card-processor";

/**
 * The dependencies of a function that serves the card processor's routes, from the environment as
 * a Lambda gets it: the base (table, clock, config) and the card processor, no email or event bus.
 * For tests only: the functions' entry points (packages/functions/src/lambda/*.ts) pick their
 * capabilities from capabilities/ themselves, so each bundle carries only the SDKs its routes use.
 */
export function createDeps(env: NodeJS.ProcessEnv = process.env): Deps {
  return createBaseDeps(env, [cardProcessor]);
}
