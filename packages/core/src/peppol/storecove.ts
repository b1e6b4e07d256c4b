import { splitPeppolId } from "./participant-id";
import {
  type PeppolDocumentType,
  type PeppolOutcome,
  type PeppolParticipant,
  type PeppolProvider,
  PeppolProviderRefused,
  PeppolProviderUnavailable,
  type PeppolSubmission,
} from "../capabilities/peppol-provider";

/**
 * The Storecove adapter (REST API v2, https://api.storecove.com/api/v2; the endpoints and shapes of
 * its OpenAPI document 2.0.1): a legal entity per business with its Peppol identifier, the
 * receiver discovery, the document submission of our own UBL as raw document data (Storecove parses
 * it, `parseStrategy: "ubl"`), and the sending evidence as the outcome. `fetch` only: no SDK, so
 * the functions that carry it stay small. The key is sent as `Authorization: Bearer`, never logged
 * and never part of an error message (an error says what failed, by status).
 */
export interface StorecoveOptions {
  apiKey: string;
  /** The API's base URL (STORECOVE_API_BASE): a stand-in server in tests and `npm start`. */
  apiBase?: string;
  /** Per request; 10 s by default. */
  timeoutMs?: number;
}

export const STORECOVE_API_BASE = "https://api.storecove.com/api/v2";
const SUPERSCHEME = "iso6523-actorid-upis";

/**
 * Storecove names Peppol identifier schemes as the Peppol code list's "Scheme ID" (BE:EN for 0208);
 * a scheme not in this table is sent as its ICD code.
 */
const SCHEME_NAMES: Record<string, string> = {
  "0002": "FR:SIRENE",
  "0007": "SE:ORGNR",
  "0009": "FR:SIRET",
  "0037": "FI:OVT",
  "0060": "DUNS",
  "0088": "GLN",
  "0106": "NL:KVK",
  "0151": "AU:ABN",
  "0183": "CH:UIDB",
  "0184": "DK:DIGST",
  "0190": "NL:OINO",
  "0191": "EE:CC",
  "0192": "NO:ORGNR",
  "0195": "SG:UEN",
  "0196": "IS:KTNR",
  "0199": "LEI",
  "0200": "LT:LEC",
  "0201": "IT:CUUO",
  "0204": "DE:LWID",
  "0208": "BE:EN",
  "0210": "IT:CFI",
  "0211": "IT:IVA",
  "9910": "HU:VAT",
  "9913": "EU:REID",
  "9914": "AT:VAT",
  "9915": "AT:GOV",
  "9918": "IBAN",
  "9919": "AT:KUR",
  "9920": "ES:VAT",
  "9925": "BE:VAT",
  "9927": "CH:VAT",
  "9930": "DE:VAT",
  "9932": "GB:VAT",
  "9935": "IE:VAT",
  "9944": "NL:VAT",
  "9957": "FR:VAT",
  "9959": "US:EIN",
};

/** A Peppol identifier as Storecove's `{ scheme, identifier }`. */
export function storecoveIdentifier(peppolId: string): { scheme: string; identifier: string } {
  const { scheme, identifier } = splitPeppolId(peppolId);
  return { scheme: SCHEME_NAMES[scheme] ?? scheme, identifier };
}

export function createStorecoveProvider(options: StorecoveOptions): PeppolProvider {
  const base = (options.apiBase || STORECOVE_API_BASE).replace(/\/+$/, "");
  const timeoutMs = options.timeoutMs ?? 10_000;

  async function call(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }> {
    let res: Response;
    try {
      res = await fetch(`${base}${path}`, {
        method,
        headers: {
          Authorization: `Bearer ${options.apiKey}`,
          Accept: "application/json",
          ...(body === undefined ? {} : { "Content-Type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (error) {
      throw new PeppolProviderUnavailable(`Storecove ${method} ${path.split("/")[1]}: ${(error as Error).name}`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (res.status >= 500 || res.status === 429)
      throw new PeppolProviderUnavailable(`Storecove ${method} ${path.split("/")[1]}: HTTP ${res.status}`);
    return { status: res.status, json };
  }

  /** A 4xx other than the ones a caller expects: the provider's reason, from its ErrorModel list. */
  function refused(status: number, json: unknown): PeppolProviderRefused {
    const details = Array.isArray(json)
      ? json
          .map((e) => (e && typeof e === "object" ? String((e as { details?: unknown }).details ?? "") : ""))
          .filter(Boolean)
      : [];
    return new PeppolProviderRefused(details.length > 0 ? details.join("; ").slice(0, 500) : `HTTP ${status}`);
  }

  return {
    name: "storecove",

    async register(participant: PeppolParticipant) {
      const entity = await call("POST", "/legal_entities", {
        party_name: participant.name,
        line1: participant.address.line1 ?? "-",
        city: participant.address.city ?? "-",
        zip: participant.address.postalCode ?? "-",
        country: participant.address.country,
        public: true,
      });
      const id = (entity.json as { id?: unknown } | undefined)?.id;
      if (entity.status !== 200 || typeof id !== "number") throw refused(entity.status, entity.json);
      const identifier = await call("POST", `/legal_entities/${id}/peppol_identifiers`, {
        superscheme: SUPERSCHEME,
        ...storecoveIdentifier(participant.peppolId),
      });
      if (identifier.status !== 200) {
        // No half registration: the entity goes again with its identifier refused.
        await call("DELETE", `/legal_entities/${id}`).catch(() => undefined);
        throw refused(identifier.status, identifier.json);
      }
      return { reference: String(id), status: "active" as const };
    },

    async deregister(reference: string, peppolId: string) {
      const { scheme, identifier } = storecoveIdentifier(peppolId);
      const path = `/legal_entities/${encodeURIComponent(reference)}`;
      const removed = await call(
        "DELETE",
        `${path}/peppol_identifiers/${SUPERSCHEME}/${encodeURIComponent(scheme)}/${encodeURIComponent(identifier)}`,
      );
      if (removed.status !== 204 && removed.status !== 404) throw refused(removed.status, removed.json);
      const entity = await call("DELETE", path);
      if (entity.status !== 204 && entity.status !== 404) throw refused(entity.status, entity.json);
    },

    async canReceive(peppolId: string, documentType: PeppolDocumentType) {
      const res = await call("POST", "/discovery/receives", {
        documentTypes: [documentType === "credit_note" ? "creditnote" : "invoice"],
        network: "peppol",
        metaScheme: SUPERSCHEME,
        ...storecoveIdentifier(peppolId),
      });
      if (res.status !== 200) throw refused(res.status, res.json);
      return (res.json as { code?: unknown } | undefined)?.code === "OK";
    },

    async submit(submission: PeppolSubmission) {
      const { scheme, identifier } = storecoveIdentifier(submission.receiverPeppolId);
      const res = await call("POST", "/document_submissions", {
        legalEntityId: Number(submission.sender),
        idempotencyGuid: submission.idempotencyKey,
        routing: { eIdentifiers: [{ scheme, id: identifier }] },
        document: {
          documentType: "invoice",
          rawDocumentData: {
            document: Buffer.from(submission.ubl, "utf8").toString("base64"),
            parse: true,
            parseStrategy: "ubl",
          },
        },
      });
      const guid = (res.json as { guid?: unknown } | undefined)?.guid;
      if (res.status !== 200 || typeof guid !== "string") throw refused(res.status, res.json);
      return { reference: guid };
    },

    async outcome(reference: string): Promise<PeppolOutcome> {
      const res = await call("GET", `/document_submissions/${encodeURIComponent(reference)}/evidence/sending`);
      if (res.status === 404) return { status: "pending" };
      if (res.status !== 200) throw refused(res.status, res.json);
      const evidence = res.json as { network?: unknown; evidence?: { transmission_id?: unknown } } | undefined;
      if (evidence?.network === "peppol" && evidence.evidence?.transmission_id) return { status: "delivered" };
      return { status: "pending" };
    },
  };
}
