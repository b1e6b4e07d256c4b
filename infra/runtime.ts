import { limitsOf } from "./limits";
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

/**
 * The exact version of each package a function keeps beside its bundle: SST npm-installs
 * `nodejs.install` into the zip at deploy, and a bare name means "*", the registry's latest, not
 * what package-lock.json pins and the tests ran. scripts/bundle.mjs refuses a version here that is
 * not the one in node_modules, so a bump of the lock file shows up there.
 */
const BESIDE_VERSIONS = { "pdf-lib": "1.17.1", stripe: "23.1.0", "@pdf-lib/fontkit": "1.1.1" } as const;

/**
 * For the packages a function needs now and then, not at every cold start: they go beside the
 * bundle in the zip's node_modules/, not into it. SST bundles without code splitting, so a dynamic
 * import() of a bundled package is still in the bundle; only an external one is left out, and the
 * code imports it at its first use (pdf-lib: pdf/document-pdf.ts at the first PDF; stripe:
 * core/src/payments/stripe.ts at the first card processor call), so it is neither in the bundle nor
 * evaluated at a cold start.
 */
export const installedBeside = (...packages: (keyof typeof BESIDE_VERSIONS)[]) => ({
  nodejs: {
    ...lambdaRuntime.nodejs,
    install: Object.fromEntries(packages.map((name) => [name, BESIDE_VERSIONS[name]])),
  },
});

/** For the functions that draw a PDF now and then (the reminders job attaches one to some emails). */
export const pdfLibBeside = installedBeside("pdf-lib");

/** Only the production stage keeps data and refuses deletion; other stages are disposable copies. */
export const isProduction = (stage: string): boolean => stage === "production";

/** How long each stage keeps logs: a year in production (incidents are found late), two weeks elsewhere. */
export const logRetention = (stage: string) => (isProduction(stage) ? ("1 year" as const) : ("2 weeks" as const));

/**
 * A function's physical name, `<app>-<stage>-<logical name>`: fixed rather than SST's generated one
 * (which ends in a random suffix) so the alarms in infra/alarms.ts and an operator reading the
 * console name it directly. Lambda allows 64 characters.
 */
function functionName(logicalName: string): string {
  const name = `${$app.name}-${$app.stage}-${logicalName}`;
  if (name.length > 64)
    throw new Error(`function name ${name} is longer than Lambda's 64 characters: shorten the stage`);
  return name;
}

type Timeout = `${number} second${"" | "s"}` | `${number} minute${"" | "s"}`;

/** Every function declared through functionBase, for the alarms (infra/alarms.ts). */
export const declaredFunctions: { logicalName: string; name: string; timeoutSeconds: number }[] = [];

/**
 * What every function of the app declares besides its handler: the runtime above, its fixed name,
 * its timeout, its log group's retention, and in production a log group that outlives the function
 * (`sst remove` is refused there anyway; a function taken out of the config keeps its logs).
 */
export function functionBase(logicalName: string, timeout: Timeout) {
  const production = isProduction($app.stage);
  const name = functionName(logicalName);
  const [amount, unit] = timeout.split(" ");
  const timeoutSeconds = Number(amount) * (unit!.startsWith("minute") ? 60 : 1);
  if (!declaredFunctions.some((fn) => fn.name === name)) declaredFunctions.push({ logicalName, name, timeoutSeconds });
  return {
    ...lambdaRuntime,
    name,
    timeout,
    // The stage's per-tenant limits and this function's reserved concurrency (infra/limits.ts).
    ...limitsOf(production, logicalName),
    logging: { retention: logRetention($app.stage) },
    transform: {
      logGroup: (_args: unknown, opts: { retainOnDelete?: boolean }) => {
        if (production) opts.retainOnDelete = true;
        return undefined;
      },
    },
  };
}
