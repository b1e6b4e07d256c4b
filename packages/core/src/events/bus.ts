import type { EventBridgeClient } from "@aws-sdk/client-eventbridge";
import type { Event } from "./resource";

/**
 * The app's EventBridge bus (deployed): every event is also put there, `source` "invoicing",
 * `detail-type` the event type, `detail` the event, for consumers inside AWS. The SDK loads at the
 * first publish, so only the stream subscriber's bundle evaluates it.
 */
export const BUS_SOURCE = "invoicing";

export interface EventBus {
  publish(events: readonly Event[]): Promise<void>;
}

export function putEventsEntries(busName: string, events: readonly Event[]) {
  return events.map((event) => ({
    EventBusName: busName,
    Source: BUS_SOURCE,
    DetailType: event.type,
    Detail: JSON.stringify(event),
    Time: new Date(event.createdAt),
  }));
}

export function createEventBridgeBus(busName: string, region: string, endpoint?: string): EventBus {
  let client: Promise<{ client: EventBridgeClient; sdk: typeof import("@aws-sdk/client-eventbridge") }> | undefined;
  const open = () =>
    (client ??= import("@aws-sdk/client-eventbridge").then((sdk) => ({
      sdk,
      client: new sdk.EventBridgeClient({ region, endpoint }),
    })));
  return {
    async publish(events) {
      if (events.length === 0) return;
      const { client, sdk } = await open();
      // PutEvents takes 10 entries at a time and reports failed entries without throwing.
      for (let i = 0; i < events.length; i += 10) {
        const out = await client.send(
          new sdk.PutEventsCommand({ Entries: putEventsEntries(busName, events.slice(i, i + 10)) }),
        );
        if (out.FailedEntryCount) throw new Error(`EventBridge refused ${out.FailedEntryCount} event(s)`);
      }
    },
  };
}
