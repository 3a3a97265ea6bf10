/**
 * The local stack's in-process renderer (Chromium and its templating workers), made apart from
 * the rest of the stack so that `npm start` can start Chromium before it loads the rest: loading
 * the stack's modules (the emulators, the AWS SDK, the handlers) is some 0.3 s of one core from
 * `npm start`'s bundle (about 1.5 s through tsx), and Chromium's launch, its process-model proof
 * and the first spare page run in processes of their own meanwhile (bin/local.ts).
 */
import { fileURLToPath } from 'node:url';
import { readRendererConfig } from '../../functions/core/config.js';
import { createInProcessRenderer } from '../../functions/renderer/in-process.js';
import type { RendererInstance } from '../../functions/renderer/renderer.js';
import { localFontconfigFile } from '../layer-fonts.js';

const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Starts the renderer now: its browser launches and its templating worker starts in the
 * background. `env` is the stack's settings (the renderer reads only its own: CHROME_EXECUTABLE_PATH,
 * PDF_TAGGED, ...); the Chromium layer's fonts, from node_modules, unless FONTCONFIG_FILE names others.
 */
export const startLocalRenderer = (
  env: Readonly<Record<string, string | undefined>>,
  spareSessions: 0 | 1,
): RendererInstance =>
  createInProcessRenderer(
    readRendererConfig({ FONTCONFIG_FILE: localFontconfigFile(PROJECT_ROOT), ...env }),
    {
      spareSessions,
    },
  );
