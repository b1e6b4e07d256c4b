import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A stand-in for the part of Storecove's REST API v2 the service calls (there is no internet here):
 * a real HTTP server on 127.0.0.1 speaking the endpoints and JSON shapes of Storecove's OpenAPI
 * document (2.0.1), which the real adapter (core/src/peppol/storecove.ts) is pointed at with
 * STORECOVE_API_BASE. It records every request, and a test decides how each receiver behaves:
 *
 * - POST /legal_entities, POST /legal_entities/:id/peppol_identifiers,
 *   DELETE /legal_entities/:id/peppol_identifiers/:superscheme/:scheme/:identifier, DELETE /legal_entities/:id
 * - POST /discovery/receives → `{ code: "OK" | "NOK" }`: a receiver is on the network when a test
 *   put it in `receivers` (Storecove's scheme names: "DE:VAT:DE987654321"), "not on the network" otherwise
 * - POST /document_submissions → `{ guid }`; a receiver set to "refuse" answers 422 with Storecove's
 *   ErrorModel list (its reason), `unavailableFor` answers 503 that many times first
 * - GET /document_submissions/:guid/evidence/sending → 404 until delivered, then the evidence
 *
 * Wrong or missing `Authorization: Bearer <key>`: 401, as Storecove answers.
 */
export interface StorecoveRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface StorecoveSubmission {
  guid: string;
  legalEntityId: number;
  receiver: string;
  /** The UBL as received (base64 decoded). */
  ubl: string;
  idempotencyGuid: string | null;
  delivered: boolean;
}

export type ReceiverBehaviour = "deliver" | "refuse" | "hold";

export interface FakeStorecove {
  url: string;
  apiKey: string;
  requests: StorecoveRequest[];
  legalEntities: Map<number, { party_name: string; country: string; identifiers: string[] }>;
  submissions: StorecoveSubmission[];
  /** Receivers on the network, by "<scheme name>:<identifier>", and what happens to a document sent to them. */
  receivers: Map<string, ReceiverBehaviour>;
  /** How many next requests answer 503 (a provider outage). */
  unavailableFor: number;
  /**
   * Identifiers ("<scheme name>:<identifier>") already registered with another access point:
   * adding one to a legal entity answers 422 with Storecove's ErrorModel list.
   */
  takenIdentifiers: Set<string>;
  close(): Promise<void>;
}

export async function startFakeStorecove(apiKey = "sc_test_key_0123456789"): Promise<FakeStorecove> {
  let nextEntity = 1000;
  const fake: FakeStorecove = {
    url: "",
    apiKey,
    requests: [],
    legalEntities: new Map(),
    submissions: [],
    receivers: new Map(),
    unavailableFor: 0,
    takenIdentifiers: new Set(),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = undefined;
      }
      const path = (req.url ?? "/").replace(/^\/api\/v2/, "");
      fake.requests.push({ method: req.method ?? "GET", path, headers: req.headers, body });
      const send = (status: number, json?: unknown) => {
        res.writeHead(status, json === undefined ? {} : { "Content-Type": "application/json" });
        res.end(json === undefined ? undefined : JSON.stringify(json));
      };
      if (req.headers.authorization !== `Bearer ${fake.apiKey}`) return send(401);
      if (fake.unavailableFor > 0) {
        fake.unavailableFor--;
        return send(503);
      }
      const b = (body ?? {}) as Record<string, any>;
      const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
      if (req.method === "POST" && path === "/legal_entities") {
        const missing = ["party_name", "line1", "city", "zip", "country"].filter((k) => !b[k]);
        if (missing.length > 0)
          return send(
            422,
            missing.map((k) => ({ source: k, details: `${k} is required` })),
          );
        const id = nextEntity++;
        fake.legalEntities.set(id, { party_name: b.party_name, country: b.country, identifiers: [] });
        return send(200, { id, party_name: b.party_name, country: b.country, peppol_identifiers: [] });
      }
      if (parts[0] === "legal_entities" && parts.length >= 2) {
        const entity = fake.legalEntities.get(Number(parts[1]));
        if (!entity) return send(404);
        if (req.method === "POST" && parts[2] === "peppol_identifiers" && parts.length === 3) {
          if (b.superscheme !== "iso6523-actorid-upis" || !b.scheme || !b.identifier)
            return send(422, [{ source: "scheme", details: "superscheme, scheme and identifier are required" }]);
          if (fake.takenIdentifiers.has(`${b.scheme}:${b.identifier}`))
            return send(422, [{ source: "identifier", details: "this identifier is registered elsewhere" }]);
          entity.identifiers.push(`${b.scheme}:${b.identifier}`);
          return send(200, { superscheme: b.superscheme, scheme: b.scheme, identifier: b.identifier });
        }
        if (req.method === "DELETE" && parts[2] === "peppol_identifiers" && parts.length === 6) {
          const id = `${parts[4]}:${parts[5]}`;
          if (!entity.identifiers.includes(id)) return send(404);
          entity.identifiers = entity.identifiers.filter((i) => i !== id);
          return send(204);
        }
        if (req.method === "DELETE" && parts.length === 2) {
          fake.legalEntities.delete(Number(parts[1]));
          return send(204);
        }
      }
      if (req.method === "POST" && path === "/discovery/receives") {
        if (b.network !== "peppol" || b.metaScheme !== "iso6523-actorid-upis" || !b.scheme || !b.identifier)
          return send(422, [{ source: "scheme", details: "network, metaScheme, scheme and identifier are required" }]);
        return send(200, { code: fake.receivers.has(`${b.scheme}:${b.identifier}`) ? "OK" : "NOK", email: false });
      }
      if (req.method === "POST" && path === "/document_submissions") {
        const receiver = `${b.routing?.eIdentifiers?.[0]?.scheme}:${b.routing?.eIdentifiers?.[0]?.id}`;
        const raw = b.document?.rawDocumentData;
        if (!fake.legalEntities.has(b.legalEntityId))
          return send(422, [{ source: "legalEntityId", details: "unknown legal entity" }]);
        if (b.document?.documentType !== "invoice" || !raw?.document || raw.parseStrategy !== "ubl")
          return send(422, [{ source: "document", details: "rawDocumentData with parseStrategy ubl expected" }]);
        const behaviour = fake.receivers.get(receiver);
        if (!behaviour) return send(422, [{ source: "routing", details: `${receiver} is not on the Peppol network` }]);
        if (behaviour === "refuse")
          return send(422, [{ source: "document", details: "The receiving access point rejected the document" }]);
        const known = b.idempotencyGuid && fake.submissions.find((s) => s.idempotencyGuid === b.idempotencyGuid);
        if (known) return send(200, { guid: known.guid });
        const submission: StorecoveSubmission = {
          guid: randomUUID(),
          legalEntityId: b.legalEntityId,
          receiver,
          ubl: Buffer.from(raw.document, "base64").toString("utf8"),
          idempotencyGuid: b.idempotencyGuid ?? null,
          delivered: behaviour === "deliver",
        };
        fake.submissions.push(submission);
        return send(200, { guid: submission.guid });
      }
      if (req.method === "GET" && parts[0] === "document_submissions" && parts[2] === "evidence") {
        const submission = fake.submissions.find((s) => s.guid === parts[1]);
        if (!submission?.delivered) return send(404);
        return send(200, {
          network: "peppol",
          receiver: submission.receiver,
          evidence: { transmission_id: `tx-${submission.guid}`, message_id: `msg-${submission.guid}` },
          documents: [],
        });
      }
      return send(404);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v2`;
  return fake;
}
