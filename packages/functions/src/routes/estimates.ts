import { Hono, type Context } from "hono";
import { etagOf } from "@invoicing/core/db/versioning";
import { createEstimate, deleteEstimate, getEstimate, listEstimates, updateEstimate } from "@invoicing/core/estimates/estimates";
import { acceptEstimate, convertEstimate, declineEstimate, sendEstimate } from "@invoicing/core/estimates/lifecycle";
import { toEstimate, type EstimateItem } from "@invoicing/core/estimates/model";
import { readJson } from "../body";
import type { AppEnv } from "../env";
import { listQuery, pageResponse } from "../pagination";
import { idAndBody, idParam, ifMatch } from "../params";
import { emptyBody } from "../schemas/common";
import { createEstimateBody, estimateListFilters, sendBody, updateEstimateBody } from "../schemas/estimates";
import { validate } from "../validation";
import { invoiceResponse } from "./invoices";

/** An estimate response: the whole resource with its ETag. */
function estimateResponse(c: Context<AppEnv>, item: EstimateItem, status: 200 | 201 = 200): Response {
  const headers: Record<string, string> = { ETag: etagOf(item.version) };
  if (status === 201) headers.Location = `/estimates/${item.id}`;
  return c.json(toEstimate(item), status, headers);
}

export const estimates = new Hono<AppEnv>()
  .post("/estimates", async (c) => {
    const body = validate(createEstimateBody, await readJson(c));
    return estimateResponse(c, await createEstimate(c.get("ctx"), body), 201);
  })
  .get("/estimates", async (c) => {
    const { page, query } = listQuery(c, estimateListFilters);
    const result = await listEstimates(c.get("ctx"), { status: query.status, clientId: query.clientId }, page);
    return pageResponse(c, result, page, toEstimate);
  })
  .get("/estimates/:id", async (c) => estimateResponse(c, await getEstimate(c.get("ctx"), idParam(c))))
  .patch("/estimates/:id", async (c) => {
    const { id, body } = await idAndBody(c, updateEstimateBody);
    return estimateResponse(c, await updateEstimate(c.get("ctx"), id, body, ifMatch(c)));
  })
  .delete("/estimates/:id", async (c) => {
    await deleteEstimate(c.get("ctx"), idParam(c));
    return c.body(null, 204);
  })
  .post("/estimates/:id/send", async (c) => {
    const { id, body } = await idAndBody(c, sendBody, { optional: true });
    return estimateResponse(c, await sendEstimate(c.get("ctx"), id, body));
  })
  .post("/estimates/:id/accept", async (c) => {
    const { id } = await idAndBody(c, emptyBody, { optional: true });
    return estimateResponse(c, await acceptEstimate(c.get("ctx"), id));
  })
  .post("/estimates/:id/decline", async (c) => {
    const { id } = await idAndBody(c, emptyBody, { optional: true });
    return estimateResponse(c, await declineEstimate(c.get("ctx"), id));
  })
  .post("/estimates/:id/convert", async (c) => {
    const { id } = await idAndBody(c, emptyBody, { optional: true });
    // 201 with the new invoice and its Location (API.md section 7).
    return invoiceResponse(c, await convertEstimate(c.get("ctx"), id), 201);
  });
