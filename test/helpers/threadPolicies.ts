// Linux scheduling policy of threads, read from /proc (what `ps -L -o cls,rtprio` shows): field 41
// `policy` and field 40 `rt_priority` of /proc/<pid>/task/<tid>/stat (proc(5)).
import fs from 'node:fs';

export type SchedPolicy = 'other' | 'fifo' | 'rr' | 'other+';
export interface ThreadPolicy {
  policy: SchedPolicy;
  /** 1..99 under fifo/rr, 0 otherwise. */
  rtPriority: number;
}

const NAMES: Record<number, SchedPolicy> = { 0: 'other', 1: 'fifo', 2: 'rr' };

function parse(stat: string): ThreadPolicy & { comm: string } {
  const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
  // fields[0] is field 3 (state): rt_priority (40) is fields[37], policy (41) is fields[38].
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { comm, policy: NAMES[Number(fields[38])] ?? 'other+', rtPriority: Number(fields[37]) };
}

/** The policy of thread `tid` of process `pid`. */
export function threadPolicy(pid: number, tid: number): ThreadPolicy {
  const { policy, rtPriority } = parse(fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'latin1'));
  return { policy, rtPriority };
}

/** Every thread of `pid`, with its name (comm). */
export function threadPolicies(pid: number): ({ tid: number; comm: string } & ThreadPolicy)[] {
  return fs
    .readdirSync(`/proc/${pid}/task`)
    .map((t) => ({ tid: Number(t), ...parse(fs.readFileSync(`/proc/${pid}/task/${t}/stat`, 'latin1')) }));
}
