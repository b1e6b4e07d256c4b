/**
 * Deployed settings, resolved in one place: SST's linked Resource when deployed (it reads the
 * SST_RESOURCE_* environment variables), plain environment variables locally.
 */
export interface CoreConfig {
  tableName: string;
  /** Set locally (DynamoDB Local); unset on AWS. */
  dynamoEndpoint?: string;
  region: string;
  /** Base URL for links in emails (the public invoice page). */
  publicBaseUrl?: string;
}

function sstResource(name: string): Record<string, unknown> | undefined {
  const raw = process.env[`SST_RESOURCE_${name}`];
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): CoreConfig {
  const table = sstResource("Table");
  const api = sstResource("ApiUrl");
  const tableName = (table?.name as string | undefined) ?? env.TABLE_NAME ?? "invoicing";
  return {
    tableName,
    dynamoEndpoint: env.DYNAMODB_ENDPOINT || undefined,
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? "us-east-1",
    publicBaseUrl: env.PUBLIC_BASE_URL ?? (api?.value as string | undefined),
  };
}
