import { readdirSync, readFileSync } from 'node:fs';

/** What /proc tells about one process: resident memory, open file descriptors and descendant processes. */
export interface ProcStats {
  rssBytes: number;
  fds: number;
  /** Processes whose parent chain leads to the process (children, grandchildren, ...). */
  descendants: number;
}

/** Reads /proc/<pid>/status, /proc/<pid>/fd and the parent links of every process; throws if the process is gone. */
export function procStats(pid: number): ProcStats {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rssKb = Number(/^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1] ?? Number.NaN);
  const fds = readdirSync(`/proc/${pid}/fd`).length;
  return { rssBytes: rssKb * 1024, fds, descendants: descendantsOf(pid).length };
}

/** Pids of every live process below `pid` in the process tree. */
export function descendantsOf(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // exited while we looked
    }
    // The command name may contain spaces and parentheses: the fields after the last ')' are fixed.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const list = children.get(ppid) ?? [];
    list.push(Number(name));
    children.set(ppid, list);
  }
  const out: number[] = [];
  const stack = [...(children.get(pid) ?? [])];
  while (stack.length > 0) {
    const next = stack.pop() as number;
    out.push(next);
    stack.push(...(children.get(next) ?? []));
  }
  return out;
}
