/** Types of scripts/infra.mjs (plain JS so `npm run build` runs on Node without a loader). */
export declare const root: string;

/** A component infra declared, as recorded offline. */
interface RecordedComponent {
  /** SST's type name, e.g. "sst.aws.Dynamo". */
  kind: string;
  /** The name infra gave it: the `Resource.<name>` it links as. */
  logicalName: string;
  /** The args infra passed, as passed. */
  args: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- each kind its own
  /** The resource options infra passed (retainOnDelete, …). */
  opts: { retainOnDelete?: boolean; [option: string]: unknown };
  /** ApiGatewayV2: the routes added with route(). */
  routes?: { rawRoute: string; handler: unknown; args: Record<string, unknown> }[];
  /** Placeholder outputs (ApiGatewayV2, Function): a deploy knows the real ones. */
  url?: string;
  /** Function: a placeholder ARN, which API routes may name to invoke it. */
  arn?: string;
  /** Dynamo: a placeholder table name. */
  name?: string;
  /** SnsTopic: the subscribers added with subscribe(). */
  subscribers?: { name: string; subscriber: unknown; args: Record<string, unknown> }[];
  /** A linkable component: what it links as (properties and permissions), outputs resolved. */
  link?: { properties: Record<string, unknown>; include?: { type: string; [key: string]: unknown }[] };
}

/** An IAM statement a link grants (SST's sst.aws.permission without its `type`). */
interface PermissionStatement {
  effect?: "allow" | "deny";
  actions: string[];
  resources: string[];
  conditions?: { test: string; variable: string; values: string[] }[];
}

interface EvaluatedInfra {
  app: { name: string; home: string; removal?: string; protect?: boolean; [setting: string]: unknown };
  outputs: Record<string, unknown>;
  components: RecordedComponent[];
}

/** A Lambda function infra declares, with SST's defaults applied to its trigger. */
export interface InfraFunction {
  id: string;
  handler: string;
  runtime?: string;
  architecture?: string;
  timeout?: string;
  memory?: string;
  link: RecordedComponent[];
  nodejs?: {
    minify?: boolean;
    sourcemap?: boolean;
    /** SST's list of names (each "*"), or name → version. */
    install?: string[] | Record<string, string>;
    splitting?: boolean;
    esbuild?: { external?: string[]; define?: Record<string, string> };
  };
  copyFiles?: { from: string; to?: string }[];
  trigger: /** The API routes that invoke it: one for a route's own function, several for a shared one. */
    | { kind: "api"; api: string; routes: string[] }
    | { kind: "cron"; schedule: string; event: unknown }
    | {
        kind: "stream";
        table: string;
        filters?: Record<string, unknown>[];
        transform?: { eventSourceMapping?: (args: Record<string, unknown>) => void };
      }
    | {
        kind: "queue";
        /** The queue's logical name. */
        queue: string;
        batch?: { size?: number; window?: string; partialResponses?: boolean };
        transform?: { eventSourceMapping?: (args: Record<string, unknown>) => void };
      }
    | { kind: "sns"; topic: string }
    | { kind: "invoke" };
  [setting: string]: unknown;
}

export declare function evaluateInfra(options?: {
  stage?: string;
  env?: Record<string, string | undefined>;
  /** Secret name → value, as if set with `sst secret set` (else each secret's placeholder). */
  secrets?: Record<string, string>;
  /** Settings that replace the stage map's (infra/stages.ts's StageSettings, as JSON), per named stage. */
  stages?: { production?: object; dev?: object };
}): Promise<EvaluatedInfra>;
export declare function componentsOf(infra: EvaluatedInfra, kind: string): RecordedComponent[];
export declare function functionsOf(infra: EvaluatedInfra): InfraFunction[];
export declare function linkNames(fn: InfraFunction): string[];
export declare function linkPermissions(fn: InfraFunction): PermissionStatement[];
export declare function rolePermissions(fn: InfraFunction, infra: EvaluatedInfra): PermissionStatement[];
export declare function linkProperties(component: RecordedComponent): Record<string, unknown> & { type: string };
