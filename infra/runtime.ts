/**
 * What every Lambda of the app runs on, in one place: api.ts, jobs.ts and email.ts spread it into
 * their function args, and scripts/bundle.mjs reads `runtime` and `nodejs` from what infra declares,
 * so the bundle the tests invoke is built for the runtime that will run it.
 *
 * `minify` is spelled out: SST documents it as on by default, but SST 4.17.1's builder
 * (pkg/runtime/node/build.go) minifies only when it is set to true.
 */
export const lambdaRuntime = {
  runtime: "nodejs22.x",
  architecture: "arm64",
  nodejs: { minify: true },
} as const;

/** Only the production stage keeps data and refuses deletion; other stages are disposable copies. */
export const isProduction = (stage: string): boolean => stage === "production";
