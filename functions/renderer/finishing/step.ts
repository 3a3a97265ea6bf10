/**
 * A finishing step's implementation (functions/domain/renders/finishing.ts declares the steps and
 * their order): the printed PDF in, the finished PDF out, or a failure the caller is shown.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { FinishingStepName } from '../../domain/renders/finishing.js';
import type { KmsSign } from '../../domain/signing/signing-keys.js';
import type { RenderFailureCode, RenderRequest } from '../contract.js';

/** What every step may use besides its option: the whole request, and the job's logger. */
export interface FinishingContext {
  readonly request: RenderRequest;
  readonly log: Logger;
  /** When the render started: a step's dates (CreationDate, a signature's time) agree. */
  readonly now: Date;
  /** The service's fonts (beside FONTCONFIG_FILE), which marks draw their text in; unknown: none. */
  readonly fontsDir?: string | undefined;
  /** The directories of the fonts the layer leaves out, fetched so far (fetched-fonts.ts); marks look there too. */
  readonly fetchedFontsDirs?: readonly string[] | undefined;
  /** Signs with an AWS KMS key (a signature whose key is KMS's); absent: such a signature fails. */
  readonly kms?: KmsSign | undefined;
  /** The marks' text as its templates made it, with the document's variables (render.ts). */
  readonly templated: { readonly watermark?: string; readonly stamp?: string };
}

export type StepOutcome =
  | { readonly ok: true; readonly pdf: Uint8Array }
  | { readonly ok: false; readonly code: RenderFailureCode; readonly message: string };

export type FinishingStep<K extends FinishingStepName> = (
  pdf: Uint8Array,
  option: NonNullable<RenderRequest[K]>,
  context: FinishingContext,
) => StepOutcome | Promise<StepOutcome>;
