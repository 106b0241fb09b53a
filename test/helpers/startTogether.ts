// Parts of a test rig that do not need each other to start (processes, a simulator, a
// qualification) are started together: each start-up's wait overlaps the others'. Every start is
// awaited before the first failure is thrown, so that each part that did start has been kept
// (by its own `.then`) for the test's clean-up.

export async function startTogether(...starts: Promise<unknown>[]): Promise<void> {
  const settled = await Promise.allSettled(starts);
  for (const s of settled) if (s.status === 'rejected') throw s.reason;
}
