import { DeleteMessageCommand, ReceiveMessageCommand, SQSClient } from "@aws-sdk/client-sqs";

/**
 * The loop both replays of a deployed failure queue share (stream-replay.ts, feedback-replay.ts;
 * docs/operations.md): receive the queue's messages ten at a time until none comes that was not
 * seen in this run, hand each body to `replay`, and delete the message only when `replay` says it
 * went through. What stays comes back after the visibility timeout, for a later run; a message seen
 * twice in one run (its timeout over) is not replayed twice.
 */
export async function replayQueue<T>(
  options: { queueUrl: string; region: string; visibilityTimeoutSeconds: number },
  replay: (body: string) => Promise<{ done: boolean; entry: T }>,
): Promise<({ messageId: string } & T)[]> {
  const sqs = new SQSClient({ region: options.region });
  const results: ({ messageId: string } & T)[] = [];
  const seen = new Set<string>();
  try {
    for (;;) {
      const { Messages = [] } = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: options.queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          VisibilityTimeout: options.visibilityTimeoutSeconds,
        }),
      );
      const fresh = Messages.filter((m) => m.MessageId && !seen.has(m.MessageId));
      if (fresh.length === 0) break;
      for (const message of fresh) {
        seen.add(message.MessageId!);
        const { done, entry } = await replay(message.Body ?? "");
        if (done) {
          await sqs.send(
            new DeleteMessageCommand({ QueueUrl: options.queueUrl, ReceiptHandle: message.ReceiptHandle }),
          );
        }
        results.push({ messageId: message.MessageId!, ...entry });
      }
    }
  } finally {
    sqs.destroy();
  }
  return results;
}
