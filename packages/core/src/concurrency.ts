/**
 * Runs `work` over `items` with at most `limit` at once, so one slow receiver never holds up the
 * rest. A failure of one item is logged as what it was (`what`: "webhook attempt", "email
 * delivery") and does not stop the others; each item's own record says what is left to do.
 */
export async function withConcurrency<T>(
  items: readonly T[],
  limit: number,
  what: string,
  work: (item: T) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++]!;
      await work(item).catch((error: unknown) =>
        console.warn(
          JSON.stringify({
            level: "warn",
            message: `${what} failed to run`,
            error: error instanceof Error ? error.name : String(error),
          }),
        ),
      );
    }
  });
  await Promise.all(lanes);
}
