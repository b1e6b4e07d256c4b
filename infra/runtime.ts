/**
 * What every Lambda of the app runs on, in one place: api.ts and jobs.ts spread it into their
 * function args, and the bundle test (test/deploy) reads `runtime` from what infra declares to pick
 * esbuild's target, so the bundle it invokes is built for the runtime that will run it.
 */
export const lambdaRuntime = {
  runtime: "nodejs22.x",
  architecture: "arm64",
} as const;

/** Only the production stage keeps data and refuses deletion; other stages are disposable copies. */
export const isProduction = (stage: string): boolean => stage === "production";
