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
import type { AppEnv } from "../http/app-env";
import { created, deleted, describe, list, one } from "../http/describe";
import { pageResponse } from "../http/pagination";
import { idParam } from "../http/params";
import { createClientBody, updateClientBody } from "../schemas/clients";
import { Client } from "../schemas/resources";
import { ifMatch, jsonBody, listQuery } from "../http/validators";

export const clients = new Hono<AppEnv>()
  .post(
    "/clients",
    describe({
      operationId: "createClient",
      tag: "Clients",
      summary: "Create a client",
      success: created(Client, "The new client."),
    }),
    jsonBody(createClientBody),
    async (c) => {
      const item = await createClient(c.get("ctx"), c.req.valid("json"));
      return c.json(toClient(item), 201, { Location: `/clients/${item.id}`, ETag: etagOf(item.version) });
    },
  )
  .get(
    "/clients",
    describe({
      operationId: "listClients",
      tag: "Clients",
      summary: "List clients",
      success: list(Client, "A page of clients, newest first."),
    }),
    listQuery(),
    async (c) => {
      const { page } = c.req.valid("query");
      return pageResponse(c, await listClients(c.get("ctx"), page), page, toClient);
    },
  )
  .get(
    "/clients/:id",
    describe({
      operationId: "getClient",
      rebuilds: "CLIENT",
      tag: "Clients",
      summary: "Get a client",
      success: one(Client, "The client."),
    }),
    async (c) => {
      const item = await getClient(c.get("ctx"), idParam(c));
      return c.json(toClient(item), 200, { ETag: etagOf(item.version) });
    },
  )
  .patch(
    "/clients/:id",
    describe({
      operationId: "updateClient",
      tag: "Clients",
      summary: "Update a client",
      description: "Changing a client never changes a finalized invoice's `clientName`/`clientEmail`.",
      success: one(Client, "The updated client."),
    }),
    ifMatch,
    jsonBody(updateClientBody),
    async (c) => {
      const item = await updateClient(c.get("ctx"), idParam(c), c.req.valid("json"), c.req.valid("header")["if-match"]);
      return c.json(toClient(item), 200, { ETag: etagOf(item.version) });
    },
  )
  .delete(
    "/clients/:id",
    describe({
      operationId: "deleteClient",
      tag: "Clients",
      summary: "Delete a client",
      success: deleted,
      problems: ["client_in_use"],
    }),
    async (c) => {
      await deleteClient(c.get("ctx"), idParam(c));
      return c.body(null, 204);
    },
  );
