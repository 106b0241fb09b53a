import { parentPort, type TransferListItem } from 'node:worker_threads';

// The worker thread's side of a TaskWorker (taskWorker.ts): says it is ready, then answers each
// `{ id, task }` with `{ id, reply }`. The handler is synchronous and must turn every failure of
// its input into a reply: what it throws is a crash of the worker (the task fails `crashed`).

export function serveTasks<Task, Reply>(
  module: string,
  handle: (task: Task) => { reply: Reply; transfer?: readonly TransferListItem[] },
): void {
  const port = parentPort;
  if (!port) throw new Error(`${module} must run in a worker thread`);
  port.on('message', ({ id, task }: { id: number; task: Task }) => {
    const { reply, transfer } = handle(task);
    port.postMessage({ id, reply }, transfer ?? []);
  });
  port.postMessage({ ready: true });
}
