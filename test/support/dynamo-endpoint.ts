import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { inject } from "vitest";

let mine: string | undefined;

/**
 * The DynamoDB Local this test file uses: the pool's instances are taken in turn, in the order
 * files ask (global-setup.ts says why there are several). A turn is a directory made with
 * mkdir, which only one process can make, so two files starting at once never take the same turn.
 */
export function dynamoEndpoint(): string {
  if (mine) return mine;
  const endpoints = inject("dynamoEndpoints");
  const turns = inject("dynamoTurns");
  for (let turn = 0; ; turn++) {
    try {
      mkdirSync(join(turns, String(turn)));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
      throw error;
    }
    mine = endpoints[turn % endpoints.length]!;
    return mine;
  }
}
