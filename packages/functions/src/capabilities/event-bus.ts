import { createEventBridgeBus } from "@invoicing/core/events/bus";
import type { Capability } from "./create-deps";

/** Where events also go: the EventBridge bus when one is linked (the stream subscriber). Carries its SDK. */
export const eventBus: Capability = (config) =>
  config.eventBusName
    ? { eventBus: createEventBridgeBus(config.eventBusName, config.region, config.eventBridgeEndpoint) }
    : {};
