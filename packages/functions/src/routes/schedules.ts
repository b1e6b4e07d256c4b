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
import type { AppEnv } from "../http/app-env";
import { created, deleted, describe, list, one } from "../http/describe";
import { pageResponse } from "../http/pagination";
import { idParam } from "../http/params";
import { RecurringSchedule } from "../schemas/resources";
import { createScheduleBody, scheduleListFilters, updateScheduleBody } from "../schemas/schedules";
import { actionBody, ifMatch, jsonBody, listQuery } from "../http/validators";

/** A schedule response: the whole resource with its ETag (PATCH honours If-Match, as invoices do). */
function scheduleResponse(c: Context<AppEnv>, item: ScheduleItem, status: 200 | 201 = 200): Response {
  const headers: Record<string, string> = { ETag: etagOf(item.version) };
  if (status === 201) headers.Location = `/recurring-schedules/${item.id}`;
  return c.json(toSchedule(item), status, headers);
}

const tag = "Recurring schedules";

/** POST /recurring-schedules/{id}/<action>: an empty body, the whole updated schedule back. */
const action = (run: typeof pauseSchedule) => async (c: Context<AppEnv>) =>
  scheduleResponse(c, await run(c.get("ctx"), idParam(c)));

export const schedules = new Hono<AppEnv>()
  .post(
    "/recurring-schedules",
    describe({
      operationId: "createRecurringSchedule",
      tag,
      summary: "Create a recurring schedule",
      description:
        "`startDate` defaults to now; when it is not later than now the first invoice is generated within this request. `paymentTermsDays` and `currency` default to the client's; `autoSend` to false. A `startDate` before today (UTC) or an `endDate` before `startDate` is a 400.",
      success: created(RecurringSchedule, "The new schedule."),
      problems: ["client_not_found"],
    }),
    jsonBody(createScheduleBody),
    async (c) => scheduleResponse(c, await createSchedule(c.get("ctx"), c.req.valid("json")), 201),
  )
  .get(
    "/recurring-schedules",
    describe({
      operationId: "listRecurringSchedules",
      tag,
      summary: "List recurring schedules",
      success: list(RecurringSchedule, "A page of schedules, newest first."),
    }),
    listQuery(scheduleListFilters),
    async (c) => {
      const { page, status, clientId } = c.req.valid("query");
      return pageResponse(c, await listSchedules(c.get("ctx"), { status, clientId }, page), page, toSchedule);
    },
  )
  .get(
    "/recurring-schedules/:id",
    describe({
      operationId: "getRecurringSchedule",
      rebuilds: "SCHEDULE",
      tag,
      summary: "Get a recurring schedule",
      success: one(RecurringSchedule, "The schedule."),
    }),
    async (c) => scheduleResponse(c, await getSchedule(c.get("ctx"), idParam(c))),
  )
  .patch(
    "/recurring-schedules/:id",
    describe({
      operationId: "updateRecurringSchedule",
      tag,
      summary: "Update a recurring schedule",
      description:
        "Active or paused only. The template fields at any time; `frequency`, `startDate` and `clientId` only while `occurrencesGenerated` is 0.",
      success: one(RecurringSchedule, "The updated schedule."),
      problems: ["schedule_not_editable", "client_not_found"],
    }),
    ifMatch,
    jsonBody(updateScheduleBody),
    async (c) =>
      scheduleResponse(
        c,
        await updateSchedule(c.get("ctx"), idParam(c), c.req.valid("json"), c.req.valid("header")["if-match"]),
      ),
  )
  .delete(
    "/recurring-schedules/:id",
    describe({
      operationId: "deleteRecurringSchedule",
      tag,
      summary: "Delete a recurring schedule",
      description: "Its invoices stay.",
      success: deleted,
    }),
    async (c) => {
      await deleteSchedule(c.get("ctx"), idParam(c));
      return c.body(null, 204);
    },
  )
  .post(
    "/recurring-schedules/:id/pause",
    describe({
      operationId: "pauseRecurringSchedule",
      tag,
      summary: "Pause a schedule",
      description: "active → paused.",
      success: one(RecurringSchedule, "The paused schedule."),
      problems: ["invalid_transition"],
    }),
    actionBody,
    action(pauseSchedule),
  )
  .post(
    "/recurring-schedules/:id/resume",
    describe({
      operationId: "resumeRecurringSchedule",
      tag,
      summary: "Resume a schedule",
      description: "paused → active. Occurrences earlier than now are skipped, not counted.",
      success: one(RecurringSchedule, "The active schedule."),
      problems: ["invalid_transition"],
    }),
    actionBody,
    action(resumeSchedule),
  )
  .post(
    "/recurring-schedules/:id/cancel",
    describe({
      operationId: "cancelRecurringSchedule",
      tag,
      summary: "Cancel a schedule",
      description: "active or paused → cancelled.",
      success: one(RecurringSchedule, "The cancelled schedule."),
      problems: ["invalid_transition"],
    }),
    actionBody,
    action(cancelSchedule),
  );
