import { readFileSync } from "node:fs";
import { packageFile } from "../package-files";

/**
 * The renderer of /docs: Swagger UI's self-contained browser bundle (swagger-ui-dist, no runtime
 * dependencies), inlined into the page so /docs needs no CDN and no further public asset routes.
 * Read from disk once, at the first /docs request, never bundled into the Lambda code.
 *
 * Where it is found: package-files.ts. Without it the page still serves the problem types and a
 * link to /openapi.json, and says the renderer is missing.
 */

interface RendererAssets {
  script: string;
  style: string;
}

const FILES = { script: "swagger-ui-bundle.js", style: "swagger-ui.css" } as const;

let loaded: RendererAssets | null | undefined;

export function rendererAssets(): RendererAssets | null {
  if (loaded !== undefined) return loaded;
  loaded = null;
  const script = packageFile("swagger-ui-dist", FILES.script);
  const style = packageFile("swagger-ui-dist", FILES.style);
  if (script && style) {
    loaded = {
      // A literal "</script" would end the inline script early (the bundle has none today; escaped all the same).
      script: readFileSync(script, "utf8").replaceAll("</script", "<\\/script"),
      style: readFileSync(style, "utf8").replaceAll("</style", "<\\/style"),
    };
  }
  return loaded;
}
