import { BatchWriteCommand, GetCommand } from "@aws-sdk/lib-dynamodb";
import { dueKeys, type DueJob } from "@invoicing/core/db/keys";
import { jobs, type JobName } from "@invoicing/core/jobs/all";
import { request } from "../test/support/env";
import { createWorld, type World } from "./world";

/**
 * Job cost against table size: each job runs over a table holding DUE records that are due and
 * NOT_DUE records waiting for it far in the future. Goal: items read ≤ due + a small constant.
 */
interface JobFigure {
  job: JobName;
  due: number;
  notDue: number;
  changed: number;
  itemsRead: number;
  requests: number;
  goal: string;
  meetsGoal: boolean;
}

const DUE = 10;
const NOT_DUE_PER_JOB = 2500; // four jobs: 10,000 records waiting in all
const SMALL_CONSTANT = 10;
const line = { description: "Consulting", quantity: "1", unitPrice: "100.00" };

type Scenario = {
  job: JobName;
  dueJob: DueJob;
  /** Makes one record waiting for the job; `due` decides whether it is due at RUN_AT. Returns its key. */
  make(world: World, clientId: number, due: boolean): Promise<{ pk: string; sk: string } | undefined>;
};

const RUN_AT = "2027-01-05T12:00:00.000Z";

async function api(world: World, method: string, path: string, body?: unknown) {
  const res = await request(world.app, method, path, body, { Authorization: `Bearer ${world.key}` });
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status} ${res.text.slice(0, 200)}`);
  return res.body;
}

const scenarios: Scenario[] = [
  {
    job: "overdue",
    dueJob: "overdue",
    async make(world, clientId, due) {
      const inv = await api(world, "POST", "/invoices", {
        clientId,
        lineItems: [line],
        dueDate: due ? "2027-01-01" : "2099-01-01",
      });
      await api(world, "POST", `/invoices/${inv.id}/finalize`);
      await api(world, "POST", `/invoices/${inv.id}/send`);
      return { pk: `USER#${world.userId}`, sk: `INVOICE#${String(inv.id).padStart(10, "0")}` };
    },
  },
  {
    job: "expire-estimates",
    dueJob: "expire-estimates",
    async make(world, clientId, due) {
      const est = await api(world, "POST", "/estimates", {
        clientId,
        lineItems: [line],
        validUntil: due ? "2027-01-01" : "2099-01-01",
      });
      await api(world, "POST", `/estimates/${est.id}/send`);
      return { pk: `USER#${world.userId}`, sk: `ESTIMATE#${String(est.id).padStart(10, "0")}` };
    },
  },
  {
    job: "recurring",
    dueJob: "recurring",
    async make(world, clientId, due) {
      const s = await api(world, "POST", "/recurring-schedules", {
        clientId,
        frequency: "yearly",
        startDate: due ? "2027-01-01" : "2099-01-01",
        lineItems: [line],
      });
      return { pk: `USER#${world.userId}`, sk: `SCHEDULE#${String(s.id).padStart(10, "0")}` };
    },
  },
  {
    job: "reminders",
    dueJob: "reminders",
    async make(world, clientId, due) {
      // Sent on Nov 22 with a due date of Jan 8: the reminder 3 days before (Jan 5) is due at RUN_AT.
      const inv = await api(world, "POST", "/invoices", {
        clientId,
        lineItems: [line],
        dueDate: due ? "2027-01-08" : "2099-01-01",
      });
      await api(world, "POST", `/invoices/${inv.id}/finalize`);
      await api(world, "POST", `/invoices/${inv.id}/send`);
      return undefined; // reminder records are cloned from the byDue list below
    },
  },
];

export async function measureJobs(endpoint: string): Promise<JobFigure[]> {
  const figures: JobFigure[] = [];
  for (const scenario of scenarios) {
    const world = await createWorld(endpoint);
    const clientId = (await api(world, "POST", "/clients", { name: "Jobs", email: "jobs@example.com" })).id;
    const template = await scenario.make(world, clientId, false);
    for (let i = 0; i < DUE; i++) await scenario.make(world, clientId, true);
    await cloneWaiting(world, scenario.dueJob, template, NOT_DUE_PER_JOB);
    world.meter.reset();
    const result = await jobs[scenario.job](world.deps, new Date(RUN_AT));
    figures.push({
      job: scenario.job,
      due: DUE,
      notDue: NOT_DUE_PER_JOB,
      changed: result.changed,
      itemsRead: world.meter.itemsRead,
      requests: world.meter.calls,
      goal: `items read ≤ ${DUE} + ${SMALL_CONSTANT}`,
      meetsGoal: world.meter.itemsRead <= DUE + SMALL_CONSTANT,
    });
  }
  return figures;
}

/**
 * Copies of a real record waiting for the job in the far future (2099), written straight to the
 * table: making 2,500 through the API would measure the API, not the job.
 */
async function cloneWaiting(world: World, job: DueJob, key: { pk: string; sk: string } | undefined, count: number) {
  const { db } = world.deps;
  const original = key
    ? (await db.doc.send(new GetCommand({ TableName: db.table, Key: key }))).Item
    : { pk: `USER#${world.userId}`, kind: "reminder" };
  if (!original) throw new Error(`no record to clone for ${job}`);
  const clones = Array.from({ length: count }, (_, i) => {
    const sk = `BENCH#${job}#${String(i).padStart(6, "0")}`;
    const { gsi1pk: _a, gsi1sk: _b, gsi2pk: _c, gsi2sk: _d, publicToken: _e, ...rest } = original;
    return { ...rest, sk, ...dueKeys(job, world.userId, sk, `2099-01-01T00:00:00.000Z`) };
  });
  for (let i = 0; i < clones.length; i += 25) {
    let pending: Record<string, unknown>[] | undefined = clones
      .slice(i, i + 25)
      .map((Item) => ({ PutRequest: { Item } }));
    while (pending?.length) {
      const out = await db.doc.send(new BatchWriteCommand({ RequestItems: { [db.table]: pending as never } }));
      pending = out.UnprocessedItems?.[db.table] as Record<string, unknown>[] | undefined;
    }
  }
}
