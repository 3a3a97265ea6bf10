/**
 * POST /v1/destinations on the wire: the shape of each field, against AWS's own rules, so that
 * nothing but a real bucket name, region and role ARN ever reaches STS or S3 (whose endpoints are
 * AWS's: the names cannot make the writer reach another address).
 */
import { z } from 'zod';

const MAX_NAME_CHARACTERS = 100;
export const MAX_KEY_TEMPLATE_CHARACTERS = 1024;
export const MAX_PREFIX_CHARACTERS = 512;

/** S3's bucket naming rules: 3-63 of a-z 0-9 . -, a letter or digit at each end, no `..`, no IP form. */
const BUCKET =
  /^(?!xn--)(?!sthree-)(?!amzn-s3-demo-)(?!\d{1,3}(\.\d{1,3}){3}$)(?!.*\.\.)(?!.*-s3alias$)(?!.*--ol-s3$)(?!.*--x-s3$)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
/** An AWS region's name (eu-west-1, us-gov-west-1, ap-southeast-3). */
const REGION = /^[a-z]{2}(-gov|-iso[a-z]?)?-[a-z]+-\d{1,2}$/;
/** An IAM role's ARN (its path and name as IAM allows them). */
const ROLE_ARN = /^arn:aws(-cn|-us-gov)?:iam::\d{12}:role\/([\w+=,.@-]+\/)*[\w+=,.@-]{1,64}$/;

const text = (max: number, what: string) =>
  z
    .string({ error: `must be a string of 1-${max} characters` })
    .min(1, { error: `must be a string of 1-${max} characters` })
    .max(max, { error: `must be a string of 1-${max} characters` })
    .describe(what);

export const createDestinationSchema = z.strictObject({
  name: text(MAX_NAME_CHARACTERS, 'a label').trim(),
  bucket: z
    .string({ error: "must be an S3 bucket's name" })
    .regex(BUCKET, { error: "must be an S3 bucket's name (3-63 of a-z, 0-9, . and -)" })
    .describe('the bucket, in your AWS account'),
  region: z
    .string({ error: "must be an AWS region's name, e.g. eu-west-1" })
    .regex(REGION, { error: "must be an AWS region's name, e.g. eu-west-1" })
    .describe("the bucket's region"),
  role_arn: z
    .string({ error: "must be an IAM role's ARN (arn:aws:iam::<account>:role/<name>)" })
    .max(2048, { error: "must be an IAM role's ARN (arn:aws:iam::<account>:role/<name>)" })
    .regex(ROLE_ARN, { error: "must be an IAM role's ARN (arn:aws:iam::<account>:role/<name>)" })
    .describe(
      'the role the service assumes, whose trust policy requires the external id (docs/api/destinations.md)',
    ),
  key_template: text(
    MAX_KEY_TEMPLATE_CHARACTERS,
    'the object key, a Jinja2 template of the job: "invoices/{{ job.created_at[:7] }}/{{ job.id }}.pdf"',
  ),
  prefix: z
    .string({ error: `must be a string of at most ${MAX_PREFIX_CHARACTERS} characters` })
    .max(MAX_PREFIX_CHARACTERS, { error: `must be a string of at most ${MAX_PREFIX_CHARACTERS} characters` })
    .optional()
    .describe('put before every key (e.g. "pdf/"); the probe object is written under it too'),
});

export type CreateDestinationBody = z.output<typeof createDestinationSchema>;
