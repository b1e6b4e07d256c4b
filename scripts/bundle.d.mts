/** Types of scripts/bundle.mjs. */
import type { InfraFunction } from "./infra.mjs";

export interface BuiltFunction {
  id: string;
  handler: string;
  /** Absolute path of the bundle.mjs. */
  bundle: string;
  exportName: string;
  bytes: number;
  /** The function's directory: the bundle, its source map and its copyFiles (the zip's root). */
  dir: string;
  /** The files SST would put in the function's zip, relative to `dir`. */
  zip: string[];
}

type Bundled = Pick<InfraFunction, "id" | "handler" | "runtime" | "nodejs" | "copyFiles">;

export declare function bundleFunctions(functions: Bundled[], outdir: string): Promise<BuiltFunction[]>;
