/**
 * Prints the paths the documents and payments functions serve,
 * read from their route modules (packages/functions/src/app/route-paths.ts), as JSON: infra/api.ts runs it, because infra is
 * evaluated by SST's own process, which cannot load the route modules (TypeScript, JSX) itself.
 */
import { functionPaths } from "../packages/functions/src/app/route-paths";

process.stdout.write(JSON.stringify(functionPaths()));
