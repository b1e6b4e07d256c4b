import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A webhook receiver on a local port (a real HTTP server): it records every POST and answers as
 * told, per request: 204, an HTTP error, no answer at all (`hang`), a cut connection (`close`), or
 * `{ hold: answer }`: held behind the receiver's gate until the test opens it, then answered so.
 * A held request lets a test see what a sender does while its attempts are in flight, for as long
 * as the test likes, without waiting for the sender's timeout.
 */
export type Answer = "ok" | "close" | number;
export type Behaviour = Answer | "hang" | { hold: Answer };

export interface Received {
  /** Its place among the arrivals and ends of every receiver in this process (a counter, no clock). */
  seq: number;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  answered: Behaviour;
  /** When it ended, on the same counter: answered by the receiver, or given up by the sender. */
  ended?: { seq: number; by: "receiver" | "sender" };
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Behaviours for the next requests, in order; after them every request gets `otherwise`. */
  script: Behaviour[];
  /** What a request gets once the script is used up ("ok" unless the test says otherwise). */
  otherwise: Behaviour;
  /** Resolves once `count` requests have arrived here in all. */
  arrived(count: number): Promise<void>;
  /** Resolves once a request held or hanging here has been given up by its sender (its timeout). */
  givenUp(): Promise<void>;
  /** The requests held now: arrived `{ hold }`, not yet answered, not given up by the sender. */
  held(): Received[];
  /** Answers every held request, and those held later at once, until `closeGate`. */
  openGate(): void;
  closeGate(): void;
  close(): Promise<void>;
}

let counter = 0;

/** The requests of `received` in flight at `seq`: arrived before it, not ended before it. */
export function inFlightAt(received: readonly Received[], seq: number): Received[] {
  return received.filter((r) => r.seq <= seq && (r.ended === undefined || r.ended.seq > seq));
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const script: Behaviour[] = [];
  const sockets = new Set<Socket>();
  const waiting: { done: () => boolean; resolve: () => void }[] = [];
  const until = (done: () => boolean) =>
    done() ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ done, resolve }));
  /** After every arrival and every end: wake those waiting for what is now the case. */
  const wake = () => {
    for (const wait of waiting.filter((w) => w.done())) {
      waiting.splice(waiting.indexOf(wait), 1);
      wait.resolve();
    }
  };
  const holding = new Map<Received, () => void>();
  let gateOpen = false;

  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const behaviour = script.shift() ?? receiver.otherwise;
      const entry: Received = { seq: ++counter, path: req.url ?? "", headers: req.headers, body, answered: behaviour };
      received.push(entry);
      // Closed before the receiver answered: the sender gave up (its timeout, or its process ended).
      res.on("close", () => {
        holding.delete(entry);
        entry.ended ??= { seq: ++counter, by: "sender" };
        wake();
      });
      const answer = (with_: Answer) => {
        holding.delete(entry);
        entry.ended = { seq: ++counter, by: "receiver" };
        if (with_ === "ok") res.writeHead(204).end();
        else if (with_ === "close") req.socket.destroy();
        else res.writeHead(with_).end("no");
      };
      if (typeof behaviour === "object") {
        if (gateOpen) answer(behaviour.hold);
        else holding.set(entry, () => answer(behaviour.hold));
      } else if (behaviour !== "hang") answer(behaviour);
      // "hang": never answer; the sender's timeout must end it.
      wake();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const receiver: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    script,
    otherwise: "ok",
    arrived: (count) => until(() => received.length >= count),
    givenUp: () => until(() => received.some((r) => r.ended?.by === "sender")),
    held: () => [...holding.keys()],
    openGate() {
      gateOpen = true;
      for (const release of [...holding.values()]) release();
    },
    closeGate() {
      gateOpen = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return receiver;
}
