import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/**
 * A webhook receiver on a local port (a real HTTP server): it records every POST and answers as
 * told, per request: 204, an HTTP error, no answer at all (`hang`), or a cut connection (`close`).
 */
export type Behaviour = "ok" | "hang" | "close" | number;

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  answered: Behaviour;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** Behaviours for the next requests, in order; after them every request is answered "ok". */
  script: Behaviour[];
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const script: Behaviour[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      const answered = script.shift() ?? "ok";
      received.push({ headers: req.headers, body, answered });
      if (answered === "ok") res.writeHead(204).end();
      else if (answered === "close") req.socket.destroy();
      else if (typeof answered === "number") res.writeHead(answered).end("no");
      // "hang": never answer; the sender's timeout must end it.
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    script,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
