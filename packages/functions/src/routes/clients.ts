import { Hono } from "hono";
import {
  createClient,
  deleteClient,
  getClient,
  listClients,
  toClient,
  updateClient,
} from "@invoicing/core/clients/clients";
import { etagOf } from "@invoicing/core/db/versioning";
import { readJson } from "../body";
import type { AppEnv } from "../env";
import { listQuery, pageResponse } from "../pagination";
import { idAndBody, idParam, ifMatch } from "../params";
import { createClientBody, updateClientBody } from "../schemas/clients";
import { validate } from "../validation";

export const clients = new Hono<AppEnv>()
  .post("/clients", async (c) => {
    const body = validate(createClientBody, await readJson(c));
    const item = await createClient(c.get("ctx"), body);
    return c.json(toClient(item), 201, { Location: `/clients/${item.id}`, ETag: etagOf(item.version) });
  })
  .get("/clients", async (c) => {
    const { page } = listQuery(c, {});
    return pageResponse(c, await listClients(c.get("ctx"), page), page, toClient);
  })
  .get("/clients/:id", async (c) => {
    const item = await getClient(c.get("ctx"), idParam(c));
    return c.json(toClient(item), 200, { ETag: etagOf(item.version) });
  })
  .patch("/clients/:id", async (c) => {
    const { id, body } = await idAndBody(c, updateClientBody);
    const item = await updateClient(c.get("ctx"), id, body, ifMatch(c));
    return c.json(toClient(item), 200, { ETag: etagOf(item.version) });
  })
  .delete("/clients/:id", async (c) => {
    await deleteClient(c.get("ctx"), idParam(c));
    return c.body(null, 204);
  });
