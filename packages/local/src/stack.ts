import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { loadConfig } from "@invoicing/core/config";
import type { Deps } from "@invoicing/core/deps";
import { USER_ID_SHAPE } from "@invoicing/core/keys/api-keys";
import { ALL_CAPABILITIES } from "@invoicing/functions/capabilities/all-capabilities";
import { createDeps } from "@invoicing/functions/capabilities/create-deps";
import { ensureTable } from "./bootstrap";
import { isReachable, startDynamoLocal, type RunningDynamo } from "./dynamo";
import { dynamoDir, endpointFile, portFile, readIfExists } from "./paths";

/**
 * The local stack's DynamoDB: DYNAMODB_ENDPOINT when set; else the DynamoDB Local that a running
 * `npm start` with the same DATA_DIR announced; else one started here, persisted under DATA_DIR.
 */
interface LocalDatabase {
  endpoint: string;
  /** Stops DynamoDB Local if this process started it. */
  stop(): Promise<void>;
  startedHere: boolean;
}

export async function openLocalDatabase(options: { allowShared: boolean }): Promise<LocalDatabase> {
  const configured = process.env.DYNAMODB_ENDPOINT;
  if (configured) return { endpoint: configured, stop: async () => {}, startedHere: false };
  if (options.allowShared) {
    const announced = readIfExists(endpointFile());
    if (announced && (await isReachable(announced)))
      return { endpoint: announced, stop: async () => {}, startedHere: false };
  }
  const running: RunningDynamo = await startDynamoLocal({ dbPath: dynamoDir() });
  return { endpoint: running.endpoint, stop: running.stop, startedHere: true };
}

/**
 * What the local stack assumes that a deployed stage does not, in one place: `npm start` and the
 * `keys`/`jobs` command lines on the local stack are the same service (API.md section 10), so a
 * webhook `npm start` delivered to, the jobs retry. A variable set in the environment wins.
 */
const LOCAL_DEFAULTS: Readonly<NodeJS.ProcessEnv> = {
  // Webhooks to http://localhost and other private targets: development only (docs/events.md).
  WEBHOOKS_ALLOW_PRIVATE: "1",
};

/**
 * The port of a running `npm start` on this DATA_DIR, unless PORT is set: the links in emails the
 * jobs send (reminders) point at the server that serves them, as the server's own emails do.
 */
function serverPort(): NodeJS.ProcessEnv {
  const port = readIfExists(portFile());
  return port && !process.env.PORT ? { PORT: port } : {};
}

/** Dependencies for the local server and command lines, with the table created when missing. */
export async function localDeps(endpoint: string, extraEnv: NodeJS.ProcessEnv = {}): Promise<Deps> {
  const env = { ...LOCAL_DEFAULTS, ...process.env, ...extraEnv, DYNAMODB_ENDPOINT: endpoint };
  const { tableName, region } = loadConfig(env);
  const client = new DynamoDBClient({
    endpoint,
    region,
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
  });
  try {
    await ensureTable(client, tableName);
  } finally {
    client.destroy();
  }
  // The local server and the jobs draw PDFs (email attachments) in process.
  return createDeps(env, ALL_CAPABILITIES);
}

/**
 * What the `keys` and `jobs` command lines run against. Under `npx sst shell --stage <stage>` SST
 * links the deployed table (SST_RESOURCE_Table), so they act on that stage's DynamoDB with the
 * shell's AWS credentials: that is how the first key of a deployed stage is made. Otherwise the
 * local stack's DynamoDB (see openLocalDatabase).
 */
async function openCommandLineDeps(): Promise<{ deps: Deps; close(): Promise<void> }> {
  if (process.env.SST_RESOURCE_Table && !process.env.DYNAMODB_ENDPOINT) {
    return { deps: createDeps(process.env, ALL_CAPABILITIES), close: async () => {} };
  }
  const database = await openLocalDatabase({ allowShared: true });
  // What reads the stream besides the table (the replay of the local failure list) reaches the same one.
  process.env.DYNAMODB_ENDPOINT ??= database.endpoint;
  try {
    return { deps: await localDeps(database.endpoint, serverPort()), close: () => database.stop() };
  } catch (error) {
    await database.stop();
    throw error;
  }
}

/**
 * The user a user command line (`keys create`, `users limits`) acts on: its `--user`, when the
 * command is the one expected and the id has the shape of one (keys/api-keys.ts USER_ID_SHAPE);
 * otherwise undefined, with the usage or the rule printed (the caller exits 2).
 */
export function userOfCommandLine(isCommand: boolean, user: string | undefined, usage: string): string | undefined {
  if (!isCommand || !user) {
    console.error(usage);
    return undefined;
  }
  if (!USER_ID_SHAPE.test(user)) {
    console.error("userId must be 1-64 characters of A-Z a-z 0-9 _ -");
    return undefined;
  }
  return user;
}

/**
 * Runs a command line: `work` gets `open()` for its dependencies (opened only once the arguments
 * are checked, closed afterwards) and returns the exit code; a thrown error exits 1 with its
 * message, never a stack trace.
 */
export function runCommandLine(work: (open: () => Promise<Deps>) => Promise<number>): void {
  let opened: { close(): Promise<void> } | undefined;
  const open = async () => {
    const handle = await openCommandLineDeps();
    opened = handle;
    return handle.deps;
  };
  work(open)
    .finally(() => opened?.close())
    .then(
      (code) => process.exit(code),
      (error: unknown) => {
        console.error(error instanceof Error ? error.message : error);
        process.exit(1);
      },
    );
}
