/** Types of scripts/sst-env.mjs. */
import type { EvaluatedInfra } from "./infra.mjs";

export declare function renderSstEnv(infra: EvaluatedInfra): Record<string, string>;
export declare function sstEnvFiles(): Promise<Record<string, string>>;
