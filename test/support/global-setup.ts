import type { TestProject } from "vitest/node";
import { startDynamoLocal } from "@invoicing/local/dynamo";

/**
 * One in-memory DynamoDB Local for the whole run (the real emulator, never an SDK mock); each test
 * file makes its own table in it (see env.ts), so files cannot see each other's records or jobs.
 */
declare module "vitest" {
  export interface ProvidedContext {
    dynamoEndpoint: string;
  }
}

export default async function setup(project: TestProject) {
  const endpoint = process.env.TEST_DYNAMODB_ENDPOINT;
  if (endpoint) {
    project.provide("dynamoEndpoint", endpoint);
    return;
  }
  const dynamo = await startDynamoLocal();
  project.provide("dynamoEndpoint", dynamo.endpoint);
  return () => dynamo.stop();
}
