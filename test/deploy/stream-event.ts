import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { marshall } from "@aws-sdk/util-dynamodb";
import type { DynamoDBStreamEvent } from "aws-lambda";

/**
 * A DynamoDB Streams event exactly as Lambda's event source mapping delivers it to the subscriber
 * (the record fields of the AWS documentation's example, images in DynamoDB JSON).
 */
let sequence = 100_000_000_000_000_000_000n;

export function dynamoDbStreamEvent(
  changes: {
    eventName: "INSERT" | "MODIFY" | "REMOVE";
    newImage?: Record<string, unknown>;
    oldImage?: Record<string, unknown>;
  }[],
): DynamoDBStreamEvent {
  return {
    Records: changes.map((change) => {
      const image = (change.newImage ?? change.oldImage)!;
      sequence += 1n;
      return {
        eventID: `${sequence.toString(16)}c0ffee`,
        eventName: change.eventName,
        eventVersion: "1.1",
        eventSource: "aws:dynamodb",
        awsRegion: "us-east-1",
        dynamodb: {
          ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
          Keys: marshall({ pk: image.pk, sk: image.sk }),
          ...(change.newImage ? { NewImage: marshall(change.newImage, { removeUndefinedValues: true }) } : {}),
          ...(change.oldImage ? { OldImage: marshall(change.oldImage, { removeUndefinedValues: true }) } : {}),
          SequenceNumber: sequence.toString(),
          SizeBytes: 512,
          StreamViewType: "NEW_AND_OLD_IMAGES",
        },
        eventSourceARN:
          "arn:aws:dynamodb:us-east-1:123456789012:table/invoicing-dev-TableTable/stream/2026-11-23T00:00:00.000",
      } as DynamoDBStreamEvent["Records"][number];
    }),
  };
}

/**
 * A local stand-in for EventBridge's PutEvents (AWS JSON 1.1 over HTTP), so the bundle's real SDK
 * client talks to something that records what it was given. Like EventBridge, it refuses a call
 * whose entries together pass 256 KiB (400 ValidationException); `refuse` makes it answer an entry
 * with an error code instead of taking it.
 */
export async function startFakeEventBridge(
  options: { refuse?: (entry: { DetailType: string; Detail: string }) => string | undefined } = {},
) {
  const entries: { Source: string; DetailType: string; Detail: string; EventBusName: string }[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const target = String(req.headers["x-amz-target"] ?? "");
      if (!target.endsWith("PutEvents")) {
        res
          .writeHead(400, { "content-type": "application/x-amz-json-1.1" })
          .end(JSON.stringify({ __type: "UnknownOperationException" }));
        return;
      }
      const input = JSON.parse(body) as { Entries: typeof entries };
      const size = input.Entries.reduce(
        (sum, e) =>
          sum + 14 + Buffer.byteLength(e.Source) + Buffer.byteLength(e.DetailType) + Buffer.byteLength(e.Detail),
        0,
      );
      if (size > 256 * 1024) {
        res.writeHead(400, { "content-type": "application/x-amz-json-1.1" }).end(
          JSON.stringify({
            __type: "ValidationException",
            message: "Total size of the entries in the request is over the limit.",
          }),
        );
        return;
      }
      const results = input.Entries.map((entry, i) => {
        const code = options.refuse?.(entry);
        if (code) return { ErrorCode: code, ErrorMessage: "refused by the test" };
        entries.push(entry);
        return { EventId: `fake-${entries.length}-${i}` };
      });
      res.writeHead(200, { "content-type": "application/x-amz-json-1.1" });
      res.end(JSON.stringify({ FailedEntryCount: results.filter((r) => "ErrorCode" in r).length, Entries: results }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    entries,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
