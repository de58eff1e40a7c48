/**
 * CPU time of groups of processes over a measurement, from /proc: the
 * machine's busy time (all cores) and the part of it each named group used,
 * so a figure on a shared machine says where its cores went.
 *
 * @module
 */

const TICKS_PER_SECOND = 100;

interface ProcessTicks {
  pid: number;
  ppid: number;
  ticks: number;
  cmdline: string;
}

function readProcesses(): ProcessTicks[] {
  const out: ProcessTicks[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      // The command name (2nd field) may hold spaces; the rest follows its closing parenthesis.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const cmdline = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).replaceAll("\0", " ");
      out.push({
        pid: Number(entry.name),
        ppid: Number(fields[1]),
        ticks: Number(fields[11]) + Number(fields[12]),
        cmdline,
      });
    } catch {
      // Ended meanwhile.
    }
  }
  return out;
}

function machineBusyTicks(): number {
  const line = Deno.readTextFileSync("/proc/stat").split("\n")[0]!;
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(
    Number,
  );
  void idle;
  void iowait;
  return user! + nice! + system! + irq! + softirq! + steal!;
}

/** Which group a process belongs to (by its command line or its parent's group), or null. */
export type Classifier = (process: { cmdline: string }, parentGroup: string | null) => string | null;

/** A snapshot of the machine's and each group's CPU ticks. */
function snapshot(classify: Classifier): { machine: number; groups: Map<string, number> } {
  const processes = readProcesses();
  const byPid = new Map(processes.map((p) => [p.pid, p]));
  const groupOf = new Map<number, string | null>();
  const resolve = (p: ProcessTicks, depth = 0): string | null => {
    if (groupOf.has(p.pid)) return groupOf.get(p.pid)!;
    const parent = byPid.get(p.ppid);
    const parentGroup = parent && depth < 3 ? resolve(parent, depth + 1) : null;
    const group = classify(p, parentGroup);
    groupOf.set(p.pid, group);
    return group;
  };
  const groups = new Map<string, number>();
  for (const p of processes) {
    const group = resolve(p);
    if (group) groups.set(group, (groups.get(group) ?? 0) + p.ticks);
  }
  return { machine: machineBusyTicks(), groups };
}

/** CPU seconds over `run`: the machine's busy time, and each group's (the rest is "others"). */
export async function cpuDuring<T>(
  classify: Classifier,
  run: () => Promise<T>,
): Promise<{ result: T; cpu: Record<string, number> }> {
  const before = snapshot(classify);
  const started = performance.now();
  const result = await run();
  const wall = (performance.now() - started) / 1000;
  const after = snapshot(classify);
  const cpu: Record<string, number> = {};
  let named = 0;
  for (const [group, ticks] of after.groups) {
    const used = Math.max(0, ticks - (before.groups.get(group) ?? 0)) / TICKS_PER_SECOND;
    cpu[group] = Math.round(used * 100) / 100;
    named += used;
  }
  const machine = (after.machine - before.machine) / TICKS_PER_SECOND;
  cpu.machine_busy = Math.round(machine * 100) / 100;
  cpu.core_seconds_available = Math.round(wall * navigator.hardwareConcurrency * 100) / 100;
  cpu.others = Math.round(Math.max(0, machine - named) * 100) / 100;
  return { result, cpu };
}
