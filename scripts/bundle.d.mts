/** Types of scripts/bundle.mjs. */
import type { InfraFunction } from "./infra.mjs";

export interface BuiltFunction {
  id: string;
  handler: string;
  /** Absolute path of the .mjs bundle. */
  bundle: string;
  exportName: string;
  bytes: number;
}

export declare function resolveHandler(handler: string): { file: string; exportName: string };
export declare function nodeTarget(runtime?: string): string;
export declare function functionDir(id: string): string;
export declare function bundleFunctions(functions: Pick<InfraFunction, "id" | "handler" | "runtime" | "nodejs">[], outdir: string): Promise<BuiltFunction[]>;
export declare function bundleFunction(fn: Pick<InfraFunction, "id" | "handler" | "runtime" | "nodejs">, outdir: string): Promise<BuiltFunction>;
