/** Types of scripts/bundle.mjs. */
import type { InfraFunction } from "./infra.mjs";

export interface BuiltFunction {
  id: string;
  handler: string;
  /** Absolute path of the bundle.mjs. */
  bundle: string;
  exportName: string;
  /** The code a cold import loads: the bundle and the chunks it imports statically (code splitting). */
  bytes: number;
  /** All the function's code in its zip: the bundle and every chunk (its node_modules/ aside). */
  codeBytes: number;
  /** The function's directory: the bundle, its source map and its copyFiles (the zip's root). */
  dir: string;
  /** The files SST would put in the function's zip, relative to `dir`. */
  zip: string[];
}

type Bundled = Pick<InfraFunction, "id" | "handler" | "runtime" | "nodejs" | "copyFiles">;

export declare function bundleFunctions(functions: Bundled[], outdir: string): Promise<BuiltFunction[]>;
