import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";

/**
 * The checkers the e-invoice tests run: our own (Java's XML parser, always available because the
 * suite needs Java for DynamoDB Local) and, when EINVOICE_ARTEFACTS points at them, the official
 * validation artefacts (docs/e-invoices.md says which files and where they come from). Saxon runs
 * each stylesheet once over a whole directory: one JVM and one compilation per stylesheet.
 */
const run = promisify(execFile);
const CHECKER = join(import.meta.dirname, "XmlCheck.java");
const SAXON = process.env.SAXON_JAR ?? "/usr/share/java/Saxon-HE.jar";

export const ARTEFACTS = process.env.EINVOICE_ARTEFACTS ?? null;

export const OFFICIAL = {
  enUbl: "xslt/EN16931-UBL-validation.xslt",
  enCii: "xslt/EN16931-CII-validation.xslt",
  xrechnungUbl: "xslt/XRechnung-UBL-validation.xslt",
  ciiXsd: "cii-xsd/CrossIndustryInvoice_100pD16B.xsd",
} as const;

/** The artefacts missing from EINVOICE_ARTEFACTS (all of them when it is unset). */
export function missingArtefacts(): string[] {
  if (!ARTEFACTS) return Object.values(OFFICIAL);
  return Object.values(OFFICIAL).filter((f) => !existsSync(join(ARTEFACTS, f)));
}

/** Parses every file (and validates it against `xsd` when given); returns the failures by file. */
export async function checkXml(files: string[], xsd: string | null = null): Promise<Record<string, string>> {
  const { stdout } = await run("java", [CHECKER, xsd ?? "-", ...files], { maxBuffer: 64 * 1024 * 1024 });
  const failures: Record<string, string> = {};
  const seen = new Set<string>();
  for (const line of stdout.split("\n")) {
    if (line.startsWith("OK ")) seen.add(line.slice(3));
    const m = /^FAIL (.*?): (.*)$/.exec(line);
    if (m) {
      seen.add(m[1]!);
      failures[m[1]!] = m[2]!;
    }
  }
  for (const f of files) if (!seen.has(f)) failures[f] = "not checked";
  return failures;
}

export interface FailedAssert {
  file: string;
  id: string;
  flag: string;
  text: string;
}

/**
 * Runs an official schematron stylesheet over every file of `inputDir` and returns the failed
 * assertions that count as errors: flag `fatal` or `error`, or no flag, as the German validator
 * (KoSIT) decides. Warnings and information are not failures.
 */
export async function schematron(xslt: string, inputDir: string, outputDir: string): Promise<FailedAssert[]> {
  await run("java", ["-jar", SAXON, `-s:${inputDir}`, `-xsl:${xslt}`, `-o:${outputDir}`], {
    maxBuffer: 64 * 1024 * 1024,
  });
  const failed: FailedAssert[] = [];
  const inputs = readdirSync(inputDir);
  for (const file of inputs) {
    const path = join(outputDir, file);
    if (!existsSync(path)) {
      failed.push({ file, id: "-", flag: "fatal", text: "no validation report" });
      continue;
    }
    const svrl = readFileSync(path, "utf8");
    if (!svrl.includes("schematron-output")) failed.push({ file, id: "-", flag: "fatal", text: "not an SVRL report" });
    for (const m of svrl.matchAll(/<svrl:failed-assert\b([^>]*)>([\s\S]*?)<\/svrl:failed-assert>/g)) {
      const attrs = m[1]!;
      const flag = /\bflag="([^"]*)"/.exec(attrs)?.[1] ?? "";
      if (flag === "warning" || flag === "information") continue;
      const id = /\bid="([^"]*)"/.exec(attrs)?.[1] ?? "?";
      const text = /<svrl:text>([\s\S]*?)<\/svrl:text>/.exec(m[2]!)?.[1]?.trim() ?? "";
      failed.push({ file, id, flag: flag || "(none)", text });
    }
  }
  return failed;
}

/** How many rules a report shows as having fired: a report with none checked nothing. */
export const firedRules = (svrlPath: string): number =>
  (readFileSync(svrlPath, "utf8").match(/<svrl:fired-rule\b/g) ?? []).length;
