import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

/**
 * Where a file that a package ships (not code: Swagger UI's browser bundle, a font) is found at run
 * time. Such files are read from disk when first needed, never bundled into the Lambda code:
 * - node_modules, resolved from here (the local server, the tests);
 * - `<function root>/<package>/` or `<function root>/node_modules/<package>/` in a Lambda, where
 *   infra's `copyFiles` (or `nodejs.install`) put them.
 * Null when it is in none of them.
 */
export function packageFile(pkg: string, file: string): string | null {
  const dirs: string[] = [];
  try {
    dirs.push(join(createRequire(import.meta.url).resolve(`${pkg}/package.json`), ".."));
  } catch {
    // Not resolvable from here (a bundled Lambda): try the function root below.
  }
  const root = process.env.LAMBDA_TASK_ROOT;
  if (root) dirs.push(join(root, pkg), join(root, "node_modules", pkg));
  for (const dir of dirs) if (existsSync(join(dir, file))) return join(dir, file);
  return null;
}
