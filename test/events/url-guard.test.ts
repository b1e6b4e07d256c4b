import { beforeAll, describe, expect, it } from "vitest";
import { isForbiddenAddress } from "@invoicing/core/capabilities/url-guard";
import { createTestEnv, expectProblem, type TestUser } from "../support/env";

/**
 * Issue 29, finding 7: the SSRF guard let the IPv4-compatible form (`[::127.0.0.1]`, which URL
 * parsing turns into `[::7f00:1]`) and Teredo (2001::/32) through, and said nothing of ports.
 * Every IPv6 form that carries an IPv4 address is now refused (mapped and translated by the IPv4
 * address they carry; compatible, NAT64, 6to4 and Teredo whole), and a deployed URL's port is 443
 * or 1024–65535. Through HTTP, with the deployed policy (private targets not allowed).
 */
let user: TestUser;

beforeAll(async () => {
  const deployed = await createTestEnv();
  user = await deployed.user();
});

const create = (url: string) => user.call("POST", "/webhook-endpoints", { url, events: ["*"] });

describe("IPv6 forms that carry an IPv4 address", () => {
  it("refuses each of them at creation with 422 webhook_url_not_allowed", async () => {
    const refused = [
      "https://[::127.0.0.1]/hooks", // IPv4-compatible, dotted
      "https://[::7f00:1]/hooks", // the same, as URL parsing writes it
      "https://[::a9fe:a9fe]/latest/meta-data", // IPv4-compatible metadata service
      "https://[::8.8.8.8]/hooks", // IPv4-compatible: deprecated, refused whatever it carries
      "https://[::ffff:0:7f00:1]/hooks", // IPv4-translated loopback
      "https://[::ffff:0:a00:1]/hooks", // IPv4-translated 10.0.0.1
      "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hooks", // Teredo
      "https://[2001::1]/hooks", // Teredo prefix
      "https://[2002:7f00:1::1]/hooks", // 6to4 of 127.0.0.1
      "https://[2002:808:808::1]/hooks", // 6to4 of a public address: still a tunnel, refused
      "https://[64:ff9b::7f00:1]/hooks", // NAT64 of 127.0.0.1
      "https://[64:ff9b:1::a9fe:a9fe]/hooks", // local-use NAT64
      "https://[::]/hooks",
    ];
    const answers = [];
    for (const url of refused) {
      const res = await create(url);
      answers.push(`${res.status} ${res.body?.code} ${url}`);
    }
    expect(answers).toEqual(refused.map((url) => `422 webhook_url_not_allowed ${url}`));
  });

  it("reads an address in any spelling: compressed, dotted tail, leading zeros, upper case, a zone", () => {
    for (const address of [
      "::127.0.0.1",
      "0:0:0:0:0:0:7f00:0001",
      "::FFFF:127.0.0.1",
      "::ffff:7f00:1",
      "0000:0000:0000:0000:0000:ffff:0a00:0001",
      "::ffff:0:169.254.169.254",
      "2001:0000:4136:e378:8000:63bf:3fff:fdd2",
      "fe80::1%eth0",
      "1::2::3",
      "12345::",
    ]) {
      expect(isForbiddenAddress(address), address).toBe(true);
    }
    for (const address of ["::ffff:8.8.8.8", "2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001::200e"]) {
      expect(isForbiddenAddress(address), address).toBe(false);
    }
  });
});

describe("ports", () => {
  it("allows 443 and 1024–65535; refuses the other well-known ports", async () => {
    for (const port of [22, 25, 80, 1023]) {
      const problem = expectProblem(
        await create(`https://93.184.215.14:${port}/hooks`),
        422,
        "webhook_url_not_allowed",
      );
      expect(problem.detail).toBe("the url's port must be 443 or 1024–65535");
    }
    for (const url of [
      "https://93.184.215.14/hooks",
      "https://93.184.215.14:443/hooks",
      "https://93.184.215.14:1024/hooks",
      "https://93.184.215.14:8443/hooks",
    ]) {
      expect((await create(url)).status, url).toBe(201);
    }
  });
});
