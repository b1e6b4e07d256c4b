import type { SQSClient } from "@aws-sdk/client-sqs";
import type { QueueName } from "../capabilities/queue-names";
import { BATCH_SIZE, type WorkMessage, type WorkQueue } from "./port";

/**
 * The work queue port on SQS (deployed): each message is one WorkMessage as JSON, sent BATCH_SIZE
 * (10, SQS's limit) per SendMessageBatch call, in the order given. The SDK loads at the first send,
 * so a function that never sends does not evaluate it. An entry SQS refuses fails the send (the
 * dispatcher's run stops there; the records stay due for the next run). `backlog` is the queue's
 * approximate counts (GetQueueAttributes: visible, in flight, delayed), which SQS updates within
 * about a minute.
 */
export function createSqsWorkQueue(urls: Partial<Record<QueueName, string>>, region: string): WorkQueue {
  let client: Promise<{ client: SQSClient; sdk: typeof import("@aws-sdk/client-sqs") }> | undefined;
  const open = () =>
    (client ??= import("@aws-sdk/client-sqs").then((sdk) => ({ sdk, client: new sdk.SQSClient({ region }) })));
  const urlOf = (queue: QueueName): string => {
    const url = urls[queue];
    if (!url) throw new Error(`no queue ${queue} is linked to this function`);
    return url;
  };
  return {
    async send(queue: QueueName, messages: readonly WorkMessage[]) {
      const url = urlOf(queue);
      const { client, sdk } = await open();
      for (let i = 0; i < messages.length; i += BATCH_SIZE) {
        const entries = messages.slice(i, i + BATCH_SIZE).map((message, n) => ({
          Id: String(n),
          MessageBody: JSON.stringify(message),
        }));
        const out = await client.send(new sdk.SendMessageBatchCommand({ QueueUrl: url, Entries: entries }));
        if (out.Failed && out.Failed.length > 0) {
          throw new Error(
            `SQS refused ${out.Failed.length} of ${entries.length} messages to ${queue}: ${out.Failed[0]!.Code}`,
          );
        }
      }
    },
    async backlog(queue: QueueName) {
      const url = urlOf(queue);
      const { client, sdk } = await open();
      const counts = [
        "ApproximateNumberOfMessages",
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesDelayed",
      ] as const;
      const out = await client.send(new sdk.GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: [...counts] }));
      return counts.reduce((sum, name) => sum + Number(out.Attributes?.[name] ?? 0), 0);
    },
  };
}
