import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local HTTP server speaking SQS's JSON protocol (X-Amz-Target `AmazonSQS.SendMessageBatch`, what
 * the work queue port sends: packages/core/src/queue/sqs.ts), so a bundled function's real SQS
 * client can send to it. The SDK sends to a queue URL's own host, so a linked queue's URL pointing
 * here is all a function needs. It keeps every message, by queue URL, and answers with the MD5 of
 * each body as SQS does (the SDK checks it).
 *
 * It also answers `ReceiveMessage` (every message of the queue not deleted, up to
 * MaxNumberOfMessages, its id as receipt handle: no visibility timeout, so a message not deleted
 * comes again on the next receive) and `DeleteMessage`, what the failure queues' replays use
 * (packages/local/src/queue-replay.ts), and `GetQueueAttributes` (the messages not deleted, what a
 * dispatcher asks before reading its due list). `put` adds a message as something else sent it.
 */
export interface FakeSqs {
  /** The base URL: a queue's URL is `${url}/<account>/<name>`. */
  url: string;
  messages: { queueUrl: string; body: string; id?: string; deleted?: boolean }[];
  put(queueUrl: string, body: string): void;
  close(): Promise<void>;
}

const md5 = (text: string) => createHash("md5").update(text).digest("hex");

export async function startFakeSqs(): Promise<FakeSqs> {
  const messages: FakeSqs["messages"] = [];
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      const target = String(req.headers["x-amz-target"] ?? "");
      const answer = (out: unknown) => {
        res.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
        res.end(JSON.stringify(out));
      };
      if (target === "AmazonSQS.ReceiveMessage") {
        const { QueueUrl, MaxNumberOfMessages = 1 } = JSON.parse(raw) as {
          QueueUrl: string;
          MaxNumberOfMessages?: number;
        };
        const waiting = messages.filter((m) => m.queueUrl === QueueUrl && !m.deleted).slice(0, MaxNumberOfMessages);
        return answer({
          Messages: waiting.map((m) => ({
            MessageId: m.id,
            ReceiptHandle: m.id,
            MD5OfBody: md5(m.body),
            Body: m.body,
          })),
        });
      }
      if (target === "AmazonSQS.GetQueueAttributes") {
        // The queue's messages not deleted, all counted as visible (nothing here is in flight).
        const { QueueUrl } = JSON.parse(raw) as { QueueUrl: string };
        const held = messages.filter((m) => m.queueUrl === QueueUrl && !m.deleted).length;
        return answer({
          Attributes: {
            ApproximateNumberOfMessages: String(held),
            ApproximateNumberOfMessagesNotVisible: "0",
            ApproximateNumberOfMessagesDelayed: "0",
          },
        });
      }
      if (target === "AmazonSQS.DeleteMessage") {
        const { QueueUrl, ReceiptHandle } = JSON.parse(raw) as { QueueUrl: string; ReceiptHandle: string };
        const found = messages.find((m) => m.queueUrl === QueueUrl && m.id === ReceiptHandle);
        if (found) found.deleted = true;
        return answer({});
      }
      if (target !== "AmazonSQS.SendMessageBatch") {
        res.writeHead(400, { "content-type": "application/x-amz-json-1.0" });
        res.end(JSON.stringify({ __type: "com.amazonaws.sqs#UnsupportedOperation", message: target }));
        return;
      }
      const body = JSON.parse(raw) as { QueueUrl: string; Entries: { Id: string; MessageBody: string }[] };
      const successful = body.Entries.map((entry, n) => {
        const id = `fake-${messages.length + 1}-${n}`;
        messages.push({ queueUrl: body.QueueUrl, body: entry.MessageBody, id });
        return { Id: entry.Id, MessageId: id, MD5OfMessageBody: md5(entry.MessageBody) };
      });
      res.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
      res.end(JSON.stringify({ Successful: successful, Failed: [] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    messages,
    put: (queueUrl, body) => void messages.push({ queueUrl, body, id: `put-${messages.length + 1}` }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
