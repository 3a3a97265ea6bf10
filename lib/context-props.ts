/**
 * The stack's props from CDK context: cdk.json's `context` or `cdk deploy -c key=value`. Values
 * from cdk.json arrive as JSON already; `-c` values arrive as strings and are parsed as JSON when
 * they are JSON (`-c renderBudgetMs=20000`, `-c plans='{"free":{…}}'`), kept as strings otherwise.
 */
import type { Node } from 'constructs';
import type { CustomDomainSettings } from './api-domain.js';
import { parseOrigins } from './cors.js';
import type { ServiceAppProps } from './service-app.js';

export class ContextError extends Error {
  constructor(key: string, problem: string) {
    super(`context ${key}: ${problem}`);
    this.name = 'ContextError';
  }
}

const read = (node: Node, key: string): unknown => {
  const value: unknown = node.tryGetContext(key);
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
};

const typed = <T>(
  node: Node,
  key: string,
  type: 'number' | 'boolean' | 'string' | 'object',
): T | undefined => {
  const value = read(node, key);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== type || (type === 'object' && Array.isArray(value))) {
    throw new ContextError(
      key,
      `must be ${type === 'object' ? 'a JSON object' : `a ${type}`}, got ${JSON.stringify(value)}`,
    );
  }
  return value as T;
};

/** A number, or off: `false` (`-c key=false`) or the word `none`. */
const numberOrOff = (node: Node, key: string): number | false | undefined => {
  const value = read(node, key);
  if (value === undefined || value === null) return undefined;
  if (value === false || value === 'none') return false;
  if (typeof value === 'number') return value;
  throw new ContextError(key, `must be a number, false or none, got ${JSON.stringify(value)}`);
};

/** `true`, `false`, or a JSON object of settings. */
const switchOrObject = <T>(node: Node, key: string): boolean | T | undefined => {
  const value = read(node, key);
  if (value === undefined || value === null || typeof value === 'boolean') return value ?? undefined;
  if (typeof value === 'object' && !Array.isArray(value)) return value as T;
  throw new ContextError(key, `must be true, false or a JSON object, got ${JSON.stringify(value)}`);
};

/** A JSON array of origins, or one comma-separated string (`-c corsAllowedOrigins=https://a,https://b`). */
const origins = (node: Node, key: string): string[] | undefined => {
  const value = read(node, key);
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return parseOrigins(value);
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value;
  throw new ContextError(
    key,
    `must be a JSON array of origins or a comma-separated string, got ${JSON.stringify(value)}`,
  );
};

export const stackNameFromContext = (node: Node): string =>
  typed<string>(node, 'stackName', 'string') ?? 'PdfRenderService';

/** `domainName` with `certificateArn` or `hostedZoneId` and `hostedZoneName`. */
const customDomain = (node: Node): CustomDomainSettings | undefined => {
  const domainName = typed<string>(node, 'domainName', 'string');
  const certificateArn = typed<string>(node, 'certificateArn', 'string');
  const hostedZoneId = typed<string>(node, 'hostedZoneId', 'string');
  const zoneName = typed<string>(node, 'hostedZoneName', 'string');
  if ((hostedZoneId === undefined) !== (zoneName === undefined)) {
    throw new ContextError('hostedZoneId', 'and hostedZoneName must be given together');
  }
  if (domainName === undefined) {
    if (certificateArn !== undefined || hostedZoneId !== undefined) {
      throw new ContextError('domainName', 'is required with certificateArn or hostedZoneId');
    }
    return undefined;
  }
  return {
    domainName,
    certificateArn,
    hostedZone: hostedZoneId && zoneName ? { hostedZoneId, zoneName } : undefined,
  };
};

export const stackPropsFromContext = (node: Node): ServiceAppProps => {
  const userPoolId = typed<string>(node, 'existingUserPoolId', 'string');
  const userPoolClientId = typed<string>(node, 'existingUserPoolClientId', 'string');
  if ((userPoolId === undefined) !== (userPoolClientId === undefined)) {
    throw new ContextError('existingUserPoolId', 'and existingUserPoolClientId must be given together');
  }
  return {
    corsAllowedOrigins: origins(node, 'corsAllowedOrigins'),
    plans: typed(node, 'plans', 'object'),
    limits: typed(node, 'limits', 'object'),
    renderBudgetMs: typed(node, 'renderBudgetMs', 'number'),
    downloadUrlTtlSeconds: typed(node, 'downloadUrlTtlSeconds', 'number'),
    pdfRetentionDays: typed(node, 'pdfRetentionDays', 'number'),
    usageLedgerRetentionDays: typed(node, 'usageLedgerRetentionDays', 'number'),
    retainData: typed(node, 'retainData', 'boolean'),
    requireMfa: typed(node, 'requireMfa', 'boolean'),
    rendererMemorySizeMiB: typed(node, 'rendererMemorySizeMiB', 'number'),
    taggedPdf: typed(node, 'taggedPdf', 'boolean'),
    alarmTopicArn: typed(node, 'alarmTopicArn', 'string'),
    alarmEmail: typed(node, 'alarmEmail', 'string'),
    alarms: typed(node, 'alarms', 'string'),
    apiThrottle: typed(node, 'apiThrottle', 'object'),
    rendererReservedConcurrency: numberOrOff(node, 'rendererReservedConcurrency'),
    rendererProvisionedConcurrency: typed(node, 'rendererProvisionedConcurrency', 'number'),
    waf: switchOrObject(node, 'waf'),
    customDomain: customDomain(node),
    cognitoEmail: typed(node, 'cognitoEmail', 'object'),
    dashboard: typed(node, 'dashboard', 'boolean'),
    dashboardPlanContact: typed(node, 'dashboardPlanContact', 'string'),
    existingUserPool: userPoolId && userPoolClientId ? { userPoolId, userPoolClientId } : undefined,
  };
};
