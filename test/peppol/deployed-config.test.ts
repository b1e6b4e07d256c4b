import { expect, it } from "vitest";

/**
 * Deployed, the Peppol provider's key is the linked secret StorecoveApiKey (infra/secrets.ts), which
 * SST hands a function as SST_RESOURCE_StorecoveApiKey: set, the provider is Storecove with that key,
 * without PEPPOL_PROVIDER (infra sets no such variable). SST reads its resources once, when its
 * module loads, so this file sets the variable before importing the config (the empty placeholder
 * is the `nonEmpty` rule every other secret follows).
 */
it("the linked StorecoveApiKey turns the Storecove provider on, with that key", async () => {
  process.env.SST_RESOURCE_StorecoveApiKey = JSON.stringify({ type: "sst.sst.Secret", value: "sc_live_test_key" });
  try {
    const { loadConfig } = await import("@invoicing/core/config");
    const config = loadConfig({});
    expect(config.peppolProvider).toBe("storecove");
    expect(config.storecoveApiKey).toBe("sc_live_test_key");
  } finally {
    delete process.env.SST_RESOURCE_StorecoveApiKey;
  }
});
