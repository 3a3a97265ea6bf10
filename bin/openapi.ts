/** Prints the OpenAPI document: `npm run --silent openapi > openapi.json`. */
import { openApiDocument } from '../functions/core/openapi.js';

process.stdout.write(`${JSON.stringify(openApiDocument(), null, 2)}\n`);
