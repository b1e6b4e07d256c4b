import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

/**
 * The renderer of /docs: Swagger UI's self-contained browser bundle (swagger-ui-dist, no runtime
 * dependencies), inlined into the page so /docs needs no CDN and no further public asset routes.
 * Read from disk once, at the first /docs request, never bundled into the Lambda code.
 *
 * Where it is found: node_modules (local server, tests), else `<function root>/swagger-ui-dist/`
 * (what infra's `copyFiles` or `nodejs.install` puts in the Lambda package). Without it the page
 * still serves the problem types and a link to /openapi.json, and says the renderer is missing.
 */

export interface RendererAssets {
  script: string;
  style: string;
}

const FILES = { script: "swagger-ui-bundle.js", style: "swagger-ui.css" } as const;

function candidates(): string[] {
  const dirs: string[] = [];
  try {
    const require = createRequire(import.meta.url);
    dirs.push(join(require.resolve(`swagger-ui-dist/package.json`), ".."));
  } catch {
    // Not resolvable from here (a bundled Lambda): try the function root below.
  }
  const root = process.env.LAMBDA_TASK_ROOT;
  if (root) dirs.push(join(root, "swagger-ui-dist"), join(root, "node_modules", "swagger-ui-dist"));
  return dirs;
}

let loaded: RendererAssets | null | undefined;

export function rendererAssets(): RendererAssets | null {
  if (loaded !== undefined) return loaded;
  loaded = null;
  for (const dir of candidates()) {
    if (!existsSync(join(dir, FILES.script)) || !existsSync(join(dir, FILES.style))) continue;
    loaded = {
      // A literal "</script" would end the inline script early (the bundle has none today; escaped all the same).
      script: readFileSync(join(dir, FILES.script), "utf8").replaceAll("</script", "<\\/script"),
      style: readFileSync(join(dir, FILES.style), "utf8").replaceAll("</style", "<\\/style"),
    };
    break;
  }
  return loaded;
}
