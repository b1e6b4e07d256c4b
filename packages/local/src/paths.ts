import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** Where the local stack keeps its state: DATA_DIR, default .data/. */
export const dataDir = (): string => resolve(process.env.DATA_DIR || ".data");
export const dynamoDir = (): string => join(dataDir(), "dynamodb");
/** Written by a running `npm start` so the command lines reach its DynamoDB Local. */
export const endpointFile = (): string => join(dataDir(), "dynamodb-endpoint");
export const devKeyFile = (): string => join(dataDir(), "dev-api-key");
/** Written by a running `npm start`: the command lines' email links point at its port too. */
export const portFile = (): string => join(dataDir(), "server-port");

export function readIfExists(path: string): string | undefined {
  return existsSync(path) ? readFileSync(path, "utf8").trim() || undefined : undefined;
}
