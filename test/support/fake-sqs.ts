import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local HTTP server speaking SQS's JSON protocol (X-Amz-Target `AmazonSQS.SendMessageBatch`, what
 * the work queue port sends: packages/core/src/queue/sqs.ts), so a bundled function's real SQS
 * client can send to it. The SDK sends to a queue URL's own host, so a linked queue's URL pointing
 * here is all a function needs. It keeps every message, by queue URL, and answers with the MD5 of
 * each body as SQS does (the SDK checks it).
 */
export interface FakeSqs {
  /** The base URL: a queue's URL is `${url}/<account>/<name>`. */
  url: string;
  messages: { queueUrl: string; body: string }[];
  close(): Promise<void>;
}

export async function startFakeSqs(): Promise<FakeSqs> {
  const messages: FakeSqs["messages"] = [];
  const server: Server = createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => (raw += chunk));
    req.on("end", () => {
      const target = String(req.headers["x-amz-target"] ?? "");
      if (target !== "AmazonSQS.SendMessageBatch") {
        res.writeHead(400, { "content-type": "application/x-amz-json-1.0" });
        res.end(JSON.stringify({ __type: "com.amazonaws.sqs#UnsupportedOperation", message: target }));
        return;
      }
      const body = JSON.parse(raw) as { QueueUrl: string; Entries: { Id: string; MessageBody: string }[] };
      const successful = body.Entries.map((entry, n) => {
        messages.push({ queueUrl: body.QueueUrl, body: entry.MessageBody });
        return {
          Id: entry.Id,
          MessageId: `fake-${messages.length}-${n}`,
          MD5OfMessageBody: createHash("md5").update(entry.MessageBody).digest("hex"),
        };
      });
      res.writeHead(200, { "content-type": "application/x-amz-json-1.0" });
      res.end(JSON.stringify({ Successful: successful, Failed: [] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    messages,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
