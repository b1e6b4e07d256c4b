import { readdirSync, readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { round } from "./sim";

/**
 * What the machine's CPU did while a figure was measured, printed beside the figure so a reader can
 * tell a figure the design made from one this machine's CPU made. On Lambda each worker has its own
 * CPU; here every simulated worker, the proxy and DynamoDB Local share this machine's cores (and
 * other users of the machine share them too). A figure measured while the machine was busy near all
 * of its cores says more about the machine than about the design.
 *
 * - `benchCpuPct`: this process (the service's code, the simulated workers, the proxy, the SDK), as
 *   a share of ONE core (Node runs them on one thread: near 100 % it is the bottleneck);
 * - `dynamoCpuPct`: the DynamoDB Locals' JVMs (this process's `java` children) together, as a share
 *   of one core: those running and those that ended meanwhile (a part starts emulators for each of
 *   its drains and stops them after), their starts included;
 * - `machineBusyPct`: every process on the machine, as a share of all its cores (/proc/stat);
 * - `load1`: the one-minute load average when the figure ended (`uptime`).
 * Linux only (/proc); elsewhere the JVM's and the machine's shares are left out.
 */
export interface CpuFigure {
  wallSeconds: number;
  benchCpuPct: number;
  dynamoCpuPct?: number;
  machineBusyPct?: number;
  cores: number;
  load1: number;
}

/** Clock ticks per second of /proc's times (USER_HZ: 100 on Linux, whatever the kernel's HZ). */
const TICKS_PER_SECOND = 100;

function machineTicks(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
    const fields = line.trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0); // idle + iowait
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

/** The pids of this process's `java` children (the DynamoDB Locals). */
function dynamoPids(): number[] {
  const pids: number[] = [];
  try {
    for (const entry of readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue;
      const stat = readProcStat(Number(entry));
      if (stat && stat.comm === "java" && stat.ppid === process.pid) pids.push(Number(entry));
    }
  } catch {
    // not Linux
  }
  return pids;
}

/**
 * The CPU ticks of this process's java children: the running ones' own, and what the ended ones
 * used (the kernel adds a child's ticks to its parent's once it is reaped; the only children here
 * are the emulators and the short `java -version` probes that start them). Undefined off Linux.
 */
function dynamoTicks(): number | undefined {
  const self = readProcStat(process.pid);
  if (!self) return undefined;
  let sum = self.endedChildrenTicks;
  for (const pid of dynamoPids()) sum += readProcStat(pid)?.cpuTicks ?? 0;
  return sum;
}

function readProcStat(
  pid: number,
): { comm: string; ppid: number; cpuTicks: number; endedChildrenTicks: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = text.lastIndexOf(")");
    const comm = text.slice(text.indexOf("(") + 1, close);
    const rest = text.slice(close + 2).split(" ");
    // After the name: state(0) ppid(1) … utime(11) stime(12), then the reaped children's cutime(13) cstime(14).
    return {
      comm,
      ppid: Number(rest[1]),
      cpuTicks: Number(rest[11]) + Number(rest[12]),
      endedChildrenTicks: Number(rest[13]) + Number(rest[14]),
    };
  } catch {
    return undefined;
  }
}

export interface CpuMeter {
  stop(): CpuFigure;
}

export function startCpuMeter(): CpuMeter {
  const started = performance.now();
  const own = process.cpuUsage();
  const jvm = dynamoTicks();
  const machine = machineTicks();
  return {
    stop() {
      const wallMs = performance.now() - started;
      const used = process.cpuUsage(own);
      const jvmNow = dynamoTicks();
      const machineNow = machineTicks();
      const figure: CpuFigure = {
        wallSeconds: round(wallMs / 1000, 1),
        benchCpuPct: round(((used.user + used.system) / 1000 / wallMs) * 100),
        cores: cpus().length,
        load1: round(loadavg()[0]!, 2),
      };
      if (jvm !== undefined && jvmNow !== undefined)
        figure.dynamoCpuPct = round((((jvmNow - jvm) / TICKS_PER_SECOND) * 1000 * 100) / wallMs);
      if (machine && machineNow && machineNow.total > machine.total)
        figure.machineBusyPct = round(((machineNow.busy - machine.busy) / (machineNow.total - machine.total)) * 100);
      return figure;
    },
  };
}

/** One line for the log: what the CPU did during a figure. */
export const describeCpu = (cpu: CpuFigure): string =>
  `CPU over ${cpu.wallSeconds} s: bench ${cpu.benchCpuPct} % of a core, DynamoDB Local ${cpu.dynamoCpuPct ?? "?"} % of a core, ` +
  `machine ${cpu.machineBusyPct ?? "?"} % busy of ${cpu.cores} cores, load ${cpu.load1}`;
