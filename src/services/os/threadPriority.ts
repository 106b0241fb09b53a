import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';

// Thread priorities (Linux niceness is per thread). Background threads (the simulator's worker
// pool, the file worker) run at a lower priority, so
// that on a loaded machine the scheduler runs the threads that keep time first: the services' main
// thread (STOP, the safety gate, the robot link), the interlock keeper, the robot's own process.
// Linux: niceness is per thread, and /proc/thread-self names this thread's id. Elsewhere, or where
// the OS refuses, the thread keeps its priority (returns false).
//
// Niceness alone is not enough where the kernel groups processes by session (autogroup,
// /proc/sys/kernel/sched_autogroup_enabled = 1, the default of most distributions' kernels): the
// scheduler first shares the CPUs *between sessions* by each session's autogroup nice, and only
// then between the threads of one session by their nice. A nice -10 keeper in the console's
// session therefore waited behind a browser that Playwright had started in a session of its own
// (setsid): on 2 cores the interlock chain (keeper, pty relay, box) saw 45–140 ms scheduling
// gaps and trials tripped `interlock_lost`. So the processes that keep time start in a
// session of their own (spawn's `detached`) and raise that session's autogroup nice too
// (setAutogroupNice); a process that should yield lowers its own session's.

/** This thread's Linux thread id (throws elsewhere). */
function thisThreadId(): number {
  const tid = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
  if (!(Number.isInteger(tid) && tid > 0)) throw new Error('no thread id');
  return tid;
}

/** This thread's Linux thread id (what `ps -L` and /proc/<pid>/task list), or null elsewhere. */
export function thisThreadIdOrNull(): number | null {
  try {
    return thisThreadId();
  } catch {
    return null;
  }
}

export function lowerThisThreadPriority(nice: number): boolean {
  try {
    const tid = thisThreadId();
    os.setPriority(tid, Math.max(os.getPriority(tid), nice));
    return true;
  } catch {
    return false;
  }
}

/** This thread's nice (Linux), or null where it cannot be read. */
export function thisThreadNice(): number | null {
  try {
    return os.getPriority(thisThreadId());
  } catch {
    return null;
  }
}

/**
 * Sets this thread's nice to exactly `nice`: lower always works, higher (a smaller value) needs
 * the privilege. For a thread that does ordinary work at one time and keeps someone's time at
 * another (the onboard computer: loads at normal priority, steps at its caller's). False where
 * refused or not Linux.
 */
export function setThisThreadNice(nice: number): boolean {
  try {
    os.setPriority(thisThreadId(), nice);
    return true;
  } catch {
    return false;
  }
}

/**
 * The threads whose timing is the safety argument — the interlock keeper's, the emulated box's,
 * the pty relay standing for the serial wire — ask for a *higher* priority (a negative nice).
 * That needs the privilege (root, or CAP_SYS_NICE granted to node); without it the thread keeps
 * its priority and this returns false. Never lowers a priority that is already higher.
 */
export function raiseThreadPriority(nice: number, tid?: number): boolean {
  try {
    const id = tid ?? thisThreadId();
    if (os.getPriority(id) <= nice) return true;
    os.setPriority(id, nice);
    return true;
  } catch {
    return false;
  }
}

/**
 * raiseThreadPriority for every thread of this process (Linux: /proc/self/task), for a process that
 * exists only to keep time: the interlock keeper reads and writes its serial port through libuv's
 * thread pool (serialport's unix read/write), so the pool's threads must not wait behind ordinary
 * work either. Call it once the pool exists (after the first file operation). Returns how many
 * threads now run at `nice` or better.
 */
export function raiseProcessThreadsPriority(nice: number): number {
  let n = 0;
  try {
    for (const t of fs.readdirSync('/proc/self/task')) if (raiseThreadPriority(nice, Number(t))) n++;
  } catch {
    // not Linux: nothing to do
  }
  return n;
}

/**
 * Sets the autogroup nice of process `pid`'s session (Linux /proc/<pid>/autogroup, kernels with
 * CONFIG_SCHED_AUTOGROUP): how the scheduler weighs that whole session against the others. A
 * negative value needs the privilege (as for raiseThreadPriority); a positive one never does.
 * Call it on a process that has a session of its own (spawned `detached`, i.e. setsid): the
 * autogroup is the session's, shared by every process in it. Never lowers a priority that is
 * already higher. Returns false where /proc shows no autogroup for `pid` (no such kernel, or a
 * /proc that does not expose it) or the OS refuses.
 */
export function setAutogroupNice(nice: number, pid: number | 'self' = 'self'): boolean {
  const file = `/proc/${pid}/autogroup`;
  try {
    // "/autogroup-123 nice 0". The file is empty for a process in the kernel's root group (its
    // session never had an autogroup of its own: init's, or a container's init session, as on one
    // CI machine): there is no session weight to set; say so rather than write to the root group.
    const m = /nice\s+(-?\d+)/.exec(fs.readFileSync(file, 'latin1'));
    if (!m) return false;
    const current = Number(m[1]);
    if (nice < 0 && current <= nice) return true;
    fs.writeFileSync(file, String(nice));
    return true;
  } catch {
    return false;
  }
}

/**
 * The real-time priority (SCHED_FIFO) of the processes whose only work is to keep the interlock's
 * time: the keeper, and in the test rig the emulated box and the pty relay. Low among real-time
 * priorities (1..99): above every ordinary thread, below the kernel's own real-time threads.
 */
export const TIMEKEEPER_RT_PRIORITY = 10;

/**
 * Puts every thread of process `pid` under SCHED_FIFO at `rtPriority` (Linux, through util-linux's
 * `chrt`, as Node has no sched_setscheduler), with SCHED_RESET_ON_FORK so that nothing it starts
 * later inherits the policy. For a process whose work per wake-up is tiny and whose *latency* is
 * the safety argument: niceness and autogroup weights only share the CPUs in proportion, so on a
 * machine where other sessions run at the same raised nice they do not bound how long a woken
 * thread waits. Measured on the 2-core workplace with other engineers' test suites and a busy
 * loop (docs/G1_RUNNER.md "A matched pair through the console"): the box and the keeper at nice
 * −10 in autogroups at −10 waited up to 383 ms and 126 ms between being woken and running;
 * under SCHED_FIFO their p99 was under 0.2 ms. Call it after the threads it must cover exist
 * (libuv's pool: after the first file operation). Needs the privilege (root or CAP_SYS_NICE with
 * an RLIMIT_RTPRIO); without it, elsewhere than Linux, or without `chrt`, the process keeps its
 * priority and this returns false. The kernel's real-time throttling (sched_rt_runtime_us, 95% by
 * default) still leaves the CPUs to ordinary work should such a process ever spin.
 */
export function setRealtimeFifo(pid: number, rtPriority: number = TIMEKEEPER_RT_PRIORITY): boolean {
  if (process.platform !== 'linux') return false;
  const r = spawnSync('chrt', ['--all-tasks', '--reset-on-fork', '--fifo', '--pid', String(rtPriority), String(pid)], {
    stdio: 'ignore',
    timeout: 2000,
  });
  return r.status === 0;
}

/**
 * The whole priority of a process that keeps time, from inside it: its main thread and, where the
 * kernel has autogroups, its session's (see setAutogroupNice; the process must have been spawned
 * `detached`). Returns whether the thread's was granted (the privilege is the same for both; a
 * kernel without autogroups has no session weight to raise). Without the privilege, both stay.
 */
export function raiseTimekeeperPriority(nice: number): boolean {
  setAutogroupNice(nice);
  return raiseThreadPriority(nice);
}

/**
 * The real-time priority of the g1-runner's real-time thread (g1RunnerWorker.ts): the same as the
 * interlock's timekeepers, as its watchdogs and its 500 Hz LowCmd are the robot's side of the
 * same safety argument. Its onboard computer steps one below (it only runs while that thread waits
 * for it, so the rank between them decides only against the DDS receive threads, which come first).
 */
export const RUNNER_RT_PRIORITY = TIMEKEEPER_RT_PRIORITY;

/**
 * Puts *this thread only* (not its process) under SCHED_FIFO at `rtPriority`, through `chrt` on
 * this thread's id (Linux). For the one thread of a process whose wake-up latency is the safety
 * argument, beside threads that do ordinary work (a bridge's WebSocket, libuv's pool, a policy
 * loader). `resetOnFork` is the caller's decision, per thread: with it, threads this thread
 * creates later start SCHED_OTHER; without it they inherit SCHED_FIFO (the g1-runner's thread
 * wants that for the Cyclone DDS threads its participant starts: lowstate receipt is on the safety
 * path), so every thread it must *not* pass the policy on to is created before the call. Same
 * privilege and fallback as setRealtimeFifo: false where refused (the thread keeps its policy).
 */
export function setThisThreadRealtimeFifo(rtPriority: number, resetOnFork: boolean): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const args = [...(resetOnFork ? ['--reset-on-fork'] : []), '--fifo', '--pid', String(rtPriority)];
    const r = spawnSync('chrt', [...args, String(thisThreadId())], { stdio: 'ignore', timeout: 2000 });
    return r.status === 0;
  } catch {
    return false;
  }
}

/** Puts this thread back under SCHED_OTHER (its nice applies again). False where refused or not Linux. */
export function setThisThreadNormalScheduling(): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const r = spawnSync('chrt', ['--other', '--pid', '0', String(thisThreadId())], { stdio: 'ignore', timeout: 2000 });
    return r.status === 0;
  } catch {
    return false;
  }
}
