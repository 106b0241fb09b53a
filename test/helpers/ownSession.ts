import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { raiseThreadPriority, setAutogroupNice } from '../../src/services/os/threadPriority';

// A test's child process that stands for something which, in the lab, does not share the CPUs
// with the test runner: the robot emulator stands for the robot's own computer, the `motionbench
// host` for the console's services, which INTERLOCK.md §5 asks to run "where it is not starved
// (or at a higher priority)". Each gets a session of its own (spawn's `detached`, i.e. setsid):
// where the kernel shares the CPUs between sessions first (autogroup, threadPriority.ts), a process
// left in the test runner's session competes with whatever else runs there, within that session's
// share. Measured on this 2-core machine with a busy loop in the test's session: 4 of 5 real
// trials of the Trial runner e2e tripped `interlock_lost` (the services' loop stalled ≥ 100 ms)
// while the host and the emulator lived in the test's session; with a session each, none in two
// runs with the host's at -5, one in one run with it at 0 (INTERLOCK.md §7).
//
// `sessionNice` is the session's autogroup nice; `threadNice`, when given, the main thread's (a
// negative one needs the privilege; without it both stay). The services' session is at 0 unless a
// test asks for more: their batch workers (the simulator's pool) run in it too, and at a negative
// session nice they would take still more of the CPUs from the browser during a qualification.
// Their main thread raises its own priority (SERVICES_NICE).
//
// A detached child is not taken down with the test runner's process group, so every one still
// running when this process exits is killed here (a SIGKILL of the runner itself leaves them; the
// harness's stop() is the normal path).

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

export function spawnInOwnSession(
  command: string,
  args: readonly string[],
  options: SpawnOptions,
  priority: { sessionNice: number; threadNice?: number },
): ChildProcess {
  const child = spawn(command, args, { ...options, detached: true });
  if (child.pid !== undefined) {
    if (priority.threadNice !== undefined) raiseThreadPriority(priority.threadNice, child.pid);
    setAutogroupNice(priority.sessionNice, child.pid);
    running.add(child);
    child.once('exit', () => running.delete(child));
  }
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const c of running) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    });
  }
  return child;
}
