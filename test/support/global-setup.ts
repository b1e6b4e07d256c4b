import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { type RunningDynamo, startDynamoLocal } from "@invoicing/local/dynamo";

/**
 * A few in-memory DynamoDB Locals for the whole run (the real emulator, never an SDK mock); each
 * test file takes one of them in turn (dynamo-endpoint.ts) and makes its own tables in it, so
 * files cannot see each other's records or jobs.
 *
 * Why several: DynamoDB Local serves every request through one SQLite thread, and its stream reads
 * (GetRecords) grow slower with every stream record the instance has ever kept — deleting tables
 * does not give them back. One instance for the whole suite made the stream-heavy files 6–15×
 * slower by the end of a run than alone (conformance: 25 s alone on a fresh instance, 156 s on one
 * that had served a few heavy files). Spread over TEST_DYNAMODB_POOL instances, each keeps a
 * fraction of the records.
 */
declare module "vitest" {
  export interface ProvidedContext {
    dynamoEndpoints: string[];
    /** Where test files take their turn (dynamo-endpoint.ts). */
    dynamoTurns: string;
  }
}

const POOL_SIZE = Number(process.env.TEST_DYNAMODB_POOL ?? 6);

export default async function setup(project: TestProject) {
  const turns = mkdtempSync(join(tmpdir(), "invoicing-dynamo-turns-"));
  project.provide("dynamoTurns", turns);
  const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  if (endpoint) {
    project.provide("dynamoEndpoints", [endpoint]);
    return () => rmSync(turns, { recursive: true, force: true });
  }
  const pool = await startPool(Math.max(1, POOL_SIZE));
  project.provide(
    "dynamoEndpoints",
    pool.map((dynamo) => dynamo.endpoint),
  );
  return async () => {
    await Promise.all(pool.map((dynamo) => dynamo.stop()));
    rmSync(turns, { recursive: true, force: true });
  };
}

/**
 * Starts the instances two at a time (each JVM start is a few seconds of CPU; six at once on a
 * loaded 2-core machine could exceed a start's deadline). An instance that does not start leaves
 * the pool smaller, with a warning; only when none starts does the run stop.
 */
async function startPool(size: number): Promise<RunningDynamo[]> {
  const pool: RunningDynamo[] = [];
  const failures: unknown[] = [];
  for (let i = 0; i < size; i += 2) {
    const started = await Promise.allSettled(Array.from({ length: Math.min(2, size - i) }, () => startDynamoLocal()));
    for (const result of started) {
      if (result.status === "fulfilled") pool.push(result.value);
      else failures.push(result.reason);
    }
  }
  if (pool.length === 0) throw failures[0];
  if (failures.length > 0)
    console.warn(`warning: ${failures.length} of ${size} DynamoDB Locals did not start; the tests use ${pool.length}`);
  return pool;
}
