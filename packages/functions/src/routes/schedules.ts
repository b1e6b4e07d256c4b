import { Hono, type Context } from "hono";
import { etagOf } from "@invoicing/core/db/versioning";
import { toSchedule, type ScheduleItem } from "@invoicing/core/schedules/model";
import {
  cancelSchedule,
  createSchedule,
  deleteSchedule,
  getSchedule,
  listSchedules,
  pauseSchedule,
  resumeSchedule,
  updateSchedule,
} from "@invoicing/core/schedules/schedules";
import { readJson } from "../body";
import type { AppEnv } from "../env";
import { listQuery, pageResponse } from "../pagination";
import { idAndBody, idParam, ifMatch } from "../params";
import { emptyBody } from "../schemas/common";
import { createScheduleBody, scheduleListFilters, updateScheduleBody } from "../schemas/schedules";
import { validate } from "../validation";

/** A schedule response: the whole resource with its ETag (PATCH honours If-Match, as invoices do). */
function scheduleResponse(c: Context<AppEnv>, item: ScheduleItem, status: 200 | 201 = 200): Response {
  const headers: Record<string, string> = { ETag: etagOf(item.version) };
  if (status === 201) headers.Location = `/recurring-schedules/${item.id}`;
  return c.json(toSchedule(item), status, headers);
}

type Action = typeof pauseSchedule;

/** POST /recurring-schedules/{id}/<action>: an empty body, the whole updated schedule back. */
const action = (run: Action) => async (c: Context<AppEnv>) => {
  const { id } = await idAndBody(c, emptyBody, { optional: true });
  return scheduleResponse(c, await run(c.get("ctx"), id));
};

export const schedules = new Hono<AppEnv>()
  .post("/recurring-schedules", async (c) => {
    const body = validate(createScheduleBody, await readJson(c));
    return scheduleResponse(c, await createSchedule(c.get("ctx"), body), 201);
  })
  .get("/recurring-schedules", async (c) => {
    const { page, query } = listQuery(c, scheduleListFilters);
    const result = await listSchedules(c.get("ctx"), { status: query.status, clientId: query.clientId }, page);
    return pageResponse(c, result, page, toSchedule);
  })
  .get("/recurring-schedules/:id", async (c) => scheduleResponse(c, await getSchedule(c.get("ctx"), idParam(c))))
  .patch("/recurring-schedules/:id", async (c) => {
    const { id, body } = await idAndBody(c, updateScheduleBody);
    return scheduleResponse(c, await updateSchedule(c.get("ctx"), id, body, ifMatch(c)));
  })
  .delete("/recurring-schedules/:id", async (c) => {
    await deleteSchedule(c.get("ctx"), idParam(c));
    return c.body(null, 204);
  })
  .post("/recurring-schedules/:id/pause", action(pauseSchedule))
  .post("/recurring-schedules/:id/resume", action(resumeSchedule))
  .post("/recurring-schedules/:id/cancel", action(cancelSchedule));
