import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect } from "vitest";
import { IN_CI, skipNotice } from "../support/ci";
import { findShared } from "../support/shared";

/**
 * The checkers the e-invoice tests run: our own (Java's XML parser, always available because the
 * suite needs Java for DynamoDB Local) and the official validation artefacts (docs/e-invoices.md
 * says which files and where they come from), run with Saxon-HE. All the schematron runs of a test
 * go through ONE Java process (Schematron.java): one JVM, each stylesheet compiled once.
 */
const run = promisify(execFile);
const CHECKER = join(import.meta.dirname, "XmlCheck.java");
const SCHEMATRON = join(import.meta.dirname, "Schematron.java");
export const SAXON = process.env.SAXON_JAR ?? "/usr/share/java/Saxon-HE.jar";

/** The official artefacts: EINVOICE_ARTEFACTS, else the shared folder's copy (never in the repository). */
const found = findShared("einvoice-artefacts", process.env.EINVOICE_ARTEFACTS);
export const ARTEFACTS = found.path;

export const OFFICIAL = {
  enUbl: "xslt/EN16931-UBL-validation.xslt",
  enCii: "xslt/EN16931-CII-validation.xslt",
  xrechnungUbl: "xslt/XRechnung-UBL-validation.xslt",
  peppolUbl: "xslt/PEPPOL-EN16931-UBL-validation.xslt",
  ciiXsd: "cii-xsd/CrossIndustryInvoice_100pD16B.xsd",
} as const;

/** The artefacts missing (all of them when no directory was found), and Saxon's jar when it is missing. */
export function missingArtefacts(): string[] {
  const files: string[] = Object.values(OFFICIAL);
  const missing = ARTEFACTS ? files.filter((f) => !existsSync(join(ARTEFACTS, f))) : [...files];
  if (!existsSync(SAXON)) missing.push(SAXON);
  return missing;
}

/**
 * Whether the official validation runs here. Without the artefacts or Saxon it is skipped with a
 * loud line, except under CI (`CI=true`, which .ci/run sets), where that is a failure: a regression
 * in an e-invoice must never land unnoticed because a machine lacked the validators.
 */
export function officialValidation(): boolean {
  const missing = missingArtefacts();
  if (missing.length === 0) return true;
  const where = ARTEFACTS ?? `none of ${found.tried.join(", ")}`;
  const message =
    `the official e-invoice validators are missing (artefacts: ${where}; missing: ${missing.join(", ")}). ` +
    "Set EINVOICE_ARTEFACTS, and install Saxon-HE with scripts/ensure-saxon.sh (docs/e-invoices.md)";
  if (IN_CI) throw new Error(`${message}: under CI they must run`);
  skipNotice("the official e-invoice validation (*** E-INVOICE OFFICIAL VALIDATION SKIPPED ***)", message);
  return false;
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

export interface SchematronRun {
  xslt: string;
  inputDir: string;
  outputDir: string;
}

/**
 * Runs official schematron stylesheets, each over every file of its input directory, all in one
 * Java process, and returns, per run, the failed assertions that count as errors: flag `fatal` or
 * `error`, or no flag, as the German validator (KoSIT) decides. Warnings and information are not
 * failures; a document without a report (the stylesheet could not process it) is one.
 */
export async function schematron(runs: SchematronRun[]): Promise<FailedAssert[][]> {
  const args = runs.flatMap((r) => [r.xslt, r.inputDir, r.outputDir]);
  const { stdout } = await run("java", ["-cp", SAXON, SCHEMATRON, ...args], { maxBuffer: 64 * 1024 * 1024 });
  const crashed = new Map<string, string>();
  for (const m of stdout.matchAll(/^FAIL (.*?): (.*)$/gm)) crashed.set(m[1]!, m[2]!);
  return runs.map(({ inputDir, outputDir }) => {
    const failed: FailedAssert[] = [];
    for (const file of readdirSync(inputDir)) {
      const path = join(outputDir, file);
      if (!existsSync(path)) {
        const why = crashed.get(join(inputDir, file)) ?? "no validation report";
        failed.push({ file, id: "-", flag: "fatal", text: why });
        continue;
      }
      const svrl = readFileSync(path, "utf8");
      if (!svrl.includes("schematron-output"))
        failed.push({ file, id: "-", flag: "fatal", text: "not an SVRL report" });
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
  });
}

/** How many rules a report shows as having fired: a report with none checked nothing. */
export const firedRules = (svrlPath: string): number =>
  (readFileSync(svrlPath, "utf8").match(/<svrl:fired-rule\b/g) ?? []).length;

/**
 * Which official stylesheets judge each format: XRechnung is EN 16931 plus its own CIUS rules;
 * Peppol BIS Billing 3.0 is EN 16931 plus OpenPEPPOL's rules (PEPPOL-EN16931-UBL).
 */
const STYLESHEETS = {
  ubl: [OFFICIAL.enUbl],
  cii: [OFFICIAL.enCii],
  xrechnung: [OFFICIAL.enUbl, OFFICIAL.xrechnungUbl],
  facturx: [OFFICIAL.enCii],
  peppol: [OFFICIAL.enUbl, OFFICIAL.peppolUbl],
} as const;

/**
 * Checks the documents the API served, laid out as `<served>/<format>/*.xml`, with every official
 * stylesheet of their format in one Java process, and expects no failed assertion.
 */
export async function expectServedValid(served: string, formats: (keyof typeof STYLESHEETS)[]): Promise<void> {
  const runs = formats.flatMap((format) => STYLESHEETS[format].map((xslt) => ({ xslt, format })));
  const reports = await schematron(
    runs.map(({ xslt, format }, n) => ({
      xslt: join(ARTEFACTS!, xslt),
      inputDir: join(served, format),
      outputDir: join(served, `svrl-${n}`),
    })),
  );
  for (const [n, { xslt, format }] of runs.entries()) {
    expect(reports[n], `${format} served by the API, ${xslt}`).toEqual([]);
  }
}
