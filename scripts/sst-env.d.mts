/** Types of scripts/sst-env.mjs. */
export declare function sstEnvFiles(): Promise<Record<string, string>>;
