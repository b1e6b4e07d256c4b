import { Hono, type Context } from "hono";
import { etagOf } from "@invoicing/core/db/versioning";
import {
  createEstimate,
  deleteEstimate,
  getEstimate,
  listEstimates,
  updateEstimate,
} from "@invoicing/core/estimates/estimates";
import { acceptEstimate, convertEstimate, declineEstimate, sendEstimate } from "@invoicing/core/estimates/lifecycle";
import { toEstimate, type EstimateItem } from "@invoicing/core/estimates/model";
import type { AppEnv } from "../http/app-env";
import { created, deleted, describe, list, one } from "../http/describe";
import { pageResponse } from "../http/pagination";
import { idParam } from "../http/params";
import { createEstimateBody, estimateListFilters, sendBody, updateEstimateBody } from "../schemas/estimates";
import { Estimate, Invoice } from "../schemas/resources";
import { actionBody, ifMatch, jsonBody, listQuery } from "../http/validators";
import { invoiceResponse } from "./invoices";

/** An estimate response: the whole resource with its ETag. */
function estimateResponse(c: Context<AppEnv>, item: EstimateItem, status: 200 | 201 = 200): Response {
  const headers: Record<string, string> = { ETag: etagOf(item.version) };
  if (status === 201) headers.Location = `/estimates/${item.id}`;
  return c.json(toEstimate(item), status, headers);
}

const tag = "Estimates";

export const estimates = new Hono<AppEnv>()
  .post(
    "/estimates",
    describe({
      operationId: "createEstimate",
      tag,
      summary: "Create a draft estimate",
      description: "`estimateNumber` (EST-000001, … per user) is assigned at creation.",
      success: created(Estimate, "The new draft."),
      problems: ["client_not_found"],
    }),
    jsonBody(createEstimateBody),
    async (c) => estimateResponse(c, await createEstimate(c.get("ctx"), c.req.valid("json")), 201),
  )
  .get(
    "/estimates",
    describe({
      operationId: "listEstimates",
      tag,
      summary: "List estimates",
      success: list(Estimate, "A page of estimates, newest first."),
    }),
    listQuery(estimateListFilters),
    async (c) => {
      const { page, status, clientId } = c.req.valid("query");
      return pageResponse(c, await listEstimates(c.get("ctx"), { status, clientId }, page), page, toEstimate);
    },
  )
  .get(
    "/estimates/:id",
    describe({
      operationId: "getEstimate",
      rebuilds: "ESTIMATE",
      tag,
      summary: "Get an estimate",
      success: one(Estimate, "The estimate."),
    }),
    async (c) => estimateResponse(c, await getEstimate(c.get("ctx"), idParam(c))),
  )
  .patch(
    "/estimates/:id",
    describe({
      operationId: "updateEstimate",
      tag,
      summary: "Update an estimate",
      description: "Draft or sent only; same rules as invoices.",
      success: one(Estimate, "The updated estimate."),
      problems: ["estimate_not_editable", "client_not_found"],
    }),
    ifMatch,
    jsonBody(updateEstimateBody),
    async (c) =>
      estimateResponse(
        c,
        await updateEstimate(c.get("ctx"), idParam(c), c.req.valid("json"), c.req.valid("header")["if-match"]),
      ),
  )
  .delete(
    "/estimates/:id",
    describe({
      operationId: "deleteEstimate",
      tag,
      summary: "Delete an estimate",
      description: "Not once accepted or converted.",
      success: deleted,
      problems: ["estimate_not_editable"],
    }),
    async (c) => {
      await deleteEstimate(c.get("ctx"), idParam(c));
      return c.body(null, 204);
    },
  )
  .post(
    "/estimates/:id/send",
    describe({
      operationId: "sendEstimate",
      tag,
      summary: "Send an estimate",
      description: "draft → sent. Emails the link to its public page; recipient rules as for invoices.",
      success: one(Estimate, "The sent estimate."),
      problems: ["invalid_transition", "client_email_missing", "email_quota_exceeded"],
    }),
    jsonBody(sendBody, { emptyAsObject: true }),
    async (c) => estimateResponse(c, await sendEstimate(c.get("ctx"), idParam(c), c.req.valid("json"))),
  )
  .post(
    "/estimates/:id/accept",
    describe({
      operationId: "acceptEstimate",
      tag,
      summary: "Accept a sent estimate",
      success: one(Estimate, "The accepted estimate."),
      problems: ["invalid_transition"],
    }),
    actionBody,
    async (c) => estimateResponse(c, await acceptEstimate(c.get("ctx"), idParam(c))),
  )
  .post(
    "/estimates/:id/decline",
    describe({
      operationId: "declineEstimate",
      tag,
      summary: "Decline a sent estimate",
      success: one(Estimate, "The declined estimate."),
      problems: ["invalid_transition"],
    }),
    actionBody,
    async (c) => estimateResponse(c, await declineEstimate(c.get("ctx"), idParam(c))),
  )
  .post(
    "/estimates/:id/convert",
    describe({
      operationId: "convertEstimate",
      tag,
      summary: "Convert an estimate to a draft invoice",
      description:
        "draft, sent or accepted → converted, atomically with a new draft invoice (the estimate's client, currency, notes, terms and lines; `estimateId` set). Responds with the new invoice.",
      success: created(Invoice, "The new draft invoice; `Location` is its URL."),
      problems: ["already_converted", "invalid_transition"],
    }),
    actionBody,
    // 201 with the new invoice and its Location.
    async (c) => invoiceResponse(c, await convertEstimate(c.get("ctx"), idParam(c)), 201),
  );
