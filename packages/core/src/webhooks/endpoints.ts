import { randomBytes } from "node:crypto";
import { GetCommand, QueryCommand } from "@aws-sdk/lib-dynamodb";
import type { Ctx, Deps } from "../deps";
import { nowIso } from "../deps";
import { commit } from "../db/commit";
import { nextId } from "../db/ids";
import { counterKey, pad, userPk } from "../db/keys";
import { optimistic, Raced } from "../db/optimistic";
import { assertIfMatch, putIfVersion } from "../db/versioning";
import { DomainError, notFound } from "../errors";
import type { WebhookEndpoint } from "./resource";
import { checkWebhookUrl } from "../capabilities/url-guard";

/**
 * Webhook endpoints: where a user's events are POSTed (docs/events.md). At most MAX_ENDPOINTS per
 * user, counted by a per-user counter that each create and delete changes in the endpoint's own
 * transaction, so concurrent creates can never pass the limit.
 *
 * The signing secret must be readable to sign each delivery, so it is stored as is, not hashed: it
 * lives only in the table (encrypted at rest by DynamoDB, readable only by the functions that link
 * the table), is shown once (the create or rotate response) and never appears in lists, logs,
 * errors or idempotency records.
 *
 * Rotation (Standard Webhooks, as Svix does it): the new secret signs at once, and the one it
 * replaced keeps signing beside it for SECRET_OVERLAP_MS, so a receiver can switch at its own pace;
 * each delivery carries one `v1,…` signature per live secret. A rotation repeated within the overlap
 * (a client retrying without an Idempotency-Key) keeps every replaced secret for its own 24 hours,
 * so the secret the receiver still holds is never cut off early.
 */
const MAX_ENDPOINTS = 10;
const SECRET_OVERLAP_MS = 24 * 3_600_000;
/** Replaced secrets kept signing at once: bounds the signature header when rotations are repeated. */
const MAX_PREVIOUS_SECRETS = 4;
const SK_PREFIX = "WEBHOOK_ENDPOINT#";
const ACTIVE_COUNTER = "webhookEndpointsActive";

/** The public endpoint: its shape is the response schema (./resource.ts). */
export type { WebhookEndpoint };

export interface WebhookEndpointItem extends WebhookEndpoint {
  pk: string;
  sk: string;
  userId: string;
  secret: string;
  /** Secrets replaced by a rotation, each signing until `until` (ISO). */
  previousSecrets?: { secret: string; until: string }[];
  /** Start of the current run of failed attempts (none since the last success); see deliveries.ts. */
  failingSince?: string;
  /** "failures": disabled by the service after failing for days (webhook_endpoint.disabled). */
  disabledBy?: string;
  updatedAt: string;
  version: number;
}

export const endpointKey = (userId: string, id: number) => ({ pk: userPk(userId), sk: `${SK_PREFIX}${pad(id)}` });

export const toWebhookEndpoint = (item: WebhookEndpointItem): WebhookEndpoint => ({
  id: item.id,
  url: item.url,
  events: item.events,
  description: item.description ?? null,
  enabled: item.enabled,
  createdAt: item.createdAt,
});

/** The secrets a delivery at `now` is signed with: the current one first, then those still overlapping. */
export const signingSecrets = (endpoint: Pick<WebhookEndpointItem, "secret" | "previousSecrets">, now: string) => [
  endpoint.secret,
  ...(endpoint.previousSecrets ?? []).filter((p) => p.until > now).map((p) => p.secret),
];

export const subscribes = (endpoint: Pick<WebhookEndpoint, "events" | "enabled">, type: string): boolean =>
  endpoint.enabled && (endpoint.events.includes("*") || endpoint.events.includes(type));

interface EndpointInput {
  url: string;
  events: string[];
  description?: string | null;
}

interface EndpointPatch {
  url?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
}

const policyOf = (deps: Pick<Deps, "webhookPolicy">) => deps.webhookPolicy ?? { allowPrivate: false };

/** `whsec_` + base64 of 32 random bytes, the Standard Webhooks secret format. */
const newSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;

export async function createEndpoint(ctx: Ctx, input: EndpointInput): Promise<WebhookEndpointItem> {
  await checkWebhookUrl(input.url, policyOf(ctx));
  const id = await nextId(ctx.db, ctx.userId, "webhookEndpoint");
  const now = nowIso(ctx);
  const item: WebhookEndpointItem = {
    ...endpointKey(ctx.userId, id),
    userId: ctx.userId,
    id,
    url: input.url,
    events: [...new Set(input.events)],
    description: input.description ?? null,
    enabled: true,
    secret: newSecret(),
    createdAt: now,
    updatedAt: now,
    version: 1,
  };
  await commit(
    ctx,
    [
      {
        op: {
          Update: {
            TableName: ctx.db.table,
            Key: counterKey(ctx.userId, ACTIVE_COUNTER),
            UpdateExpression: "ADD active :one",
            ConditionExpression: "attribute_not_exists(active) OR active < :max",
            ExpressionAttributeValues: { ":one": 1, ":max": MAX_ENDPOINTS },
          },
        },
        onConditionFailed: () =>
          new DomainError("limit_exceeded", `at most ${MAX_ENDPOINTS} webhook endpoints per account`),
      },
      { op: { Put: { TableName: ctx.db.table, Item: item, ConditionExpression: "attribute_not_exists(pk)" } } },
    ],
    item,
  );
  return item;
}

/** Every endpoint of a user (at most MAX_ENDPOINTS: one query page), oldest first. */
export async function listEndpoints(deps: Pick<Deps, "db">, userId: string): Promise<WebhookEndpointItem[]> {
  const out = await deps.db.doc.send(
    new QueryCommand({
      TableName: deps.db.table,
      KeyConditionExpression: "pk = :p AND begins_with(sk, :s)",
      ExpressionAttributeValues: { ":p": userPk(userId), ":s": SK_PREFIX },
    }),
  );
  return (out.Items ?? []) as WebhookEndpointItem[];
}

export async function findEndpoint(
  deps: Pick<Deps, "db">,
  userId: string,
  id: number,
): Promise<WebhookEndpointItem | undefined> {
  const out = await deps.db.doc.send(new GetCommand({ TableName: deps.db.table, Key: endpointKey(userId, id) }));
  return out.Item as WebhookEndpointItem | undefined;
}

export async function getEndpoint(ctx: Ctx, id: number): Promise<WebhookEndpointItem> {
  const item = await findEndpoint(ctx, ctx.userId, id);
  if (!item) throw notFound("webhook endpoint", id);
  return item;
}

export async function updateEndpoint(
  ctx: Ctx,
  id: number,
  patch: EndpointPatch,
  ifMatch?: string,
): Promise<WebhookEndpointItem> {
  let urlChecked: string | undefined;
  return optimistic(
    "webhook endpoint",
    async () => {
      const current = await getEndpoint(ctx, id);
      assertIfMatch(ifMatch, current.version);
      if (patch.url !== undefined && patch.url !== current.url && patch.url !== urlChecked) {
        await checkWebhookUrl(patch.url, policyOf(ctx));
        urlChecked = patch.url;
      }
      const next: WebhookEndpointItem = {
        ...current,
        ...patch,
        events: patch.events ? [...new Set(patch.events)] : current.events,
        updatedAt: nowIso(ctx),
        version: current.version + 1,
      };
      // Enabled again by its owner: a fresh start, not the end of the old run of failures.
      if (patch.enabled !== undefined) {
        delete next.failingSince;
        delete next.disabledBy;
      }
      await commit(ctx, [versioned(ctx, next, current.version, id)], next);
      return next;
    },
    { ifMatch },
  );
}

/**
 * A new signing secret; the replaced one keeps signing for SECRET_OVERLAP_MS (see the header).
 * Returns the endpoint with its new `secret`, the only place it is shown.
 */
export async function rotateSecret(ctx: Ctx, id: number): Promise<WebhookEndpointItem> {
  return optimistic("webhook endpoint", async () => {
    const current = await getEndpoint(ctx, id);
    const now = nowIso(ctx);
    const until = new Date(Date.parse(now) + SECRET_OVERLAP_MS).toISOString();
    const next: WebhookEndpointItem = {
      ...current,
      secret: newSecret(),
      previousSecrets: [
        { secret: current.secret, until },
        ...(current.previousSecrets ?? []).filter((p) => p.until > now),
      ].slice(0, MAX_PREVIOUS_SECRETS),
      updatedAt: now,
      version: current.version + 1,
    };
    await commit(ctx, [versioned(ctx, next, current.version, id)], next);
    return next;
  });
}

/** The endpoint's write conditioned on the version read: a change in between is Raced (read again). */
const versioned = (ctx: Ctx, next: WebhookEndpointItem, version: number, id: number) => ({
  op: putIfVersion(ctx.db.table, next, version),
  onConditionFailed: (old: Record<string, unknown> | undefined) =>
    old ? new Raced() : notFound("webhook endpoint", id),
});

export async function deleteEndpoint(ctx: Ctx, id: number): Promise<void> {
  await commit(ctx, [
    {
      op: {
        Delete: {
          TableName: ctx.db.table,
          Key: endpointKey(ctx.userId, id),
          ConditionExpression: "attribute_exists(pk)",
        },
      },
      onConditionFailed: () => notFound("webhook endpoint", id),
    },
    {
      op: {
        Update: {
          TableName: ctx.db.table,
          Key: counterKey(ctx.userId, ACTIVE_COUNTER),
          UpdateExpression: "ADD active :minus",
          ExpressionAttributeValues: { ":minus": -1 },
        },
      },
    },
  ]);
}
