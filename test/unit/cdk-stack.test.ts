/**
 * The synthesized CloudFormation template, asserted with `Match` on properties (logical ids are
 * looked up from the constructs, never written down). Bundling is skipped: these tests are about
 * the template; test/integration/bundle-smoke.test.ts runs the bundles.
 */

import { readFileSync } from 'node:fs';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  batchOutputs,
  deliveries,
  renderWorker,
  sweeper,
  usageEvents,
  webhookSender,
} from '../../functions/consumers.js';
import {
  USAGE_EVENT_DETAIL_TYPE,
  USAGE_EVENT_SOURCE,
  usageEventOf,
} from '../../functions/domain/accounts/usage-events.js';
import { batchOutputQueue, deliveryQueue, renderQueue, webhookQueue } from '../../functions/queues.js';
import { wiringOf } from '../../functions/route-declaration.js';
import { apiResources, resources, routeKey, routes } from '../../functions/routes.js';
import { tableSchema } from '../../functions/table.js';
import { DESTINATION_EXTERNAL_ID_PREFIX } from '../../functions/wiring.js';
import { type Synthesized, synthServiceStack } from '../helpers/cdk-synth.js';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON is inspected by the assertions
type Json = any;

const resourcesOf = (s: Synthesized, type: string): Record<string, Json> => s.template.findResources(type);

/** Every IAM statement attached to a role, from inline and standalone policies. */
const statementsOfRole = (s: Synthesized, roleId: string): Json[] => {
  const attached = Object.values(resourcesOf(s, 'AWS::IAM::Policy')).filter((p) =>
    (p.Properties.Roles as Json[]).some((r) => r.Ref === roleId),
  );
  const inline = resourcesOf(s, 'AWS::IAM::Role')[roleId]?.Properties.Policies ?? [];
  return [...attached, ...inline.map((p: Json) => ({ Properties: p }))].flatMap(
    (p) => p.Properties.PolicyDocument.Statement,
  );
};

const actionsOf = (statement: Json): string[] => [statement.Action].flat();

describe('the default stack', () => {
  let s: Synthesized;
  let functions: Record<string, Json>;
  const fnId = (resource: string) => s.logicalId(s.stack.api.functions.get(resource) as never);
  const rendererId = () => s.logicalId(s.stack.renderer.function);
  const workerId = () => s.logicalId(s.stack.consumer(renderWorker.name).function);
  const asyncRendererId = () => s.logicalId(s.stack.asyncRenderer.function);

  beforeAll(() => {
    s = synthServiceStack();
    functions = resourcesOf(s, 'AWS::Lambda::Function');
  });

  it('has one route per route table entry, plus $default, and nothing else', () => {
    const deployed = Object.values(resourcesOf(s, 'AWS::ApiGatewayV2::Route')).map(
      (r) => r.Properties.RouteKey,
    );
    expect(deployed.sort()).toEqual([...routes.map(routeKey), '$default'].sort());
  });

  it('sends each route to the Lambda of its resource, and $default to the fallback', () => {
    const integrations = resourcesOf(s, 'AWS::ApiGatewayV2::Integration');
    const targetFunction = (route: Json): string => {
      const integrationId = route.Properties.Target['Fn::Join'][1][1].Ref;
      return integrations[integrationId].Properties.IntegrationUri['Fn::GetAtt'][0];
    };
    for (const route of Object.values(resourcesOf(s, 'AWS::ApiGatewayV2::Route'))) {
      const key = route.Properties.RouteKey;
      const resource = key === '$default' ? 'fallback' : routes.find((r) => routeKey(r) === key)?.resource;
      expect(targetFunction(route), key).toBe(fnId(resource as string));
    }
    for (const integration of Object.values(integrations)) {
      expect(integration.Properties).toMatchObject({
        IntegrationType: 'AWS_PROXY',
        PayloadFormatVersion: '2.0',
      });
    }
  });

  it('has one Lambda per API resource, the fallback, the renderer, the async renderer, the sweeper, the webhook sender, the render queue consumer, the batch output builder, the usage event publisher and the deliverer, all on Node.js 22 or newer', () => {
    // Besides them, only aws-cdk-lib's own handler that copies the dashboard into its bucket.
    const deployHandler = s.stack.dashboard?.bucketDeploymentHandler;
    const ours = Object.keys(functions).filter((id) => id !== s.logicalId(deployHandler as never));
    expect(ours.sort()).toEqual(
      [...apiResources(), 'fallback']
        .map(fnId)
        .concat(
          rendererId(),
          asyncRendererId(),
          s.logicalId(s.stack.consumer(sweeper.name).function),
          s.logicalId(s.stack.consumer(webhookSender.name).function),
          workerId(),
          s.logicalId(s.stack.consumer(batchOutputs.name).function),
          s.logicalId(s.stack.consumer(usageEvents.name).function),
          s.logicalId(s.stack.consumer(deliveries.name).function),
        )
        .sort(),
    );
    for (const fn of ours.map((id) => functions[id])) {
      expect(Number(/^nodejs(\d+)\.x$/.exec(fn.Properties.Runtime)?.[1])).toBeGreaterThanOrEqual(22);
    }
  });

  it('feeds the webhook sender from an encrypted, TLS-only queue with a DLQ, and grants it no more than it uses', () => {
    const senderId = s.logicalId(s.stack.consumer(webhookSender.name).function);
    const queueId = s.logicalId(s.stack.queue(webhookQueue.name).queue);
    const dlqId = s.logicalId(s.stack.queue(webhookQueue.name).deadLetterQueue);
    const queues = s.template.findResources('AWS::SQS::Queue');
    // The queues and their DLQs (render, webhook, batch output) and the scheduled consumers' failure queues.
    expect(Object.keys(queues).sort()).toEqual(
      [
        dlqId,
        queueId,
        s.logicalId(s.stack.queue(renderQueue.name).queue),
        s.logicalId(s.stack.queue(renderQueue.name).deadLetterQueue),
        s.logicalId(s.stack.queue(batchOutputQueue.name).queue),
        s.logicalId(s.stack.queue(batchOutputQueue.name).deadLetterQueue),
        s.logicalId(s.stack.queue(deliveryQueue.name).queue),
        s.logicalId(s.stack.queue(deliveryQueue.name).deadLetterQueue),
        s.logicalId(s.stack.consumer(sweeper.name).failureDestination),
        s.logicalId(s.stack.consumer(usageEvents.name).failureDestination),
      ].sort(),
    );
    for (const q of Object.values(queues) as Json[]) expect(q.Properties.SqsManagedSseEnabled).toBe(true);
    expect(queues[queueId]?.Properties.RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] },
      maxReceiveCount: 5,
    });
    const ssl = Object.values(s.template.findResources('AWS::SQS::QueuePolicy')) as Json[];
    // One per queue: every queue refuses plain HTTP.
    expect(ssl).toHaveLength(Object.keys(queues).length);
    for (const p of ssl) {
      expect(JSON.stringify(p.Properties.PolicyDocument)).toContain('"aws:SecureTransport":"false"');
    }
    const mappings = (
      Object.values(s.template.findResources('AWS::Lambda::EventSourceMapping')) as Json[]
    ).filter((m) => m.Properties.FunctionName.Ref === senderId);
    expect(mappings.map((m) => [m.Properties.FunctionName, m.Properties.EventSourceArn])).toEqual([
      [{ Ref: senderId }, { 'Fn::GetAtt': [queueId, 'Arn'] }],
    ]);
    expect(mappings[0].Properties.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    const sender = functions[senderId];
    expect(sender.Properties.VpcConfig).toBeUndefined();
    expect(sender.Properties.Environment.Variables.WEBHOOK_QUEUE_URL).toEqual({ Ref: queueId });
    const actions = statementsOfRole(s, sender.Properties.Role['Fn::GetAtt'][0])
      .flatMap(actionsOf)
      .filter((a) => /^(dynamodb|sqs|s3|lambda):/.test(a))
      .sort();
    expect([...new Set(actions)]).toEqual([
      'dynamodb:GetItem',
      'dynamodb:UpdateItem',
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
      'sqs:SendMessage',
    ]);
    // Only the functions that send events may send to the queue: webhooks (test, redeliver), pdf (job
    // events), the sweeper (events of what it ends, overdue deliveries).
    const senders = Object.entries(functions)
      .filter(([, fn]) =>
        statementsOfRole(s, fn.Properties.Role['Fn::GetAtt'][0]).some((st) =>
          actionsOf(st).includes('sqs:SendMessage'),
        ),
      )
      .map(([id]) => id)
      .sort();
    // And to the render queue: pdf (async renders), batches (their jobs), merges (async merges, and
    // the events of a merge that names an endpoint) and the sweeper (re-queued jobs); the render
    // queue's consumer sends job events of async jobs to the webhook queue; the batch output builder
    // sends batch.completed.
    expect(senders).toEqual(
      [
        fnId('pdf'),
        fnId('batches'),
        fnId('merges'),
        fnId('webhooks'),
        senderId,
        s.logicalId(s.stack.consumer(sweeper.name).function),
        workerId(),
        s.logicalId(s.stack.consumer(batchOutputs.name).function),
        // To its own failure queue only (asserted with the bus below).
        s.logicalId(s.stack.consumer(usageEvents.name).function),
        // To the delivery queue: merges (above; a completed merge that names a destination), and the
        // deliverer its retries.
        s.logicalId(s.stack.consumer(deliveries.name).function),
      ].sort(),
    );
  });

  it('runs the sweeper every minute, with the table to query, read, update and record deliveries (never delete), and the webhook queue', () => {
    const sweeperId = s.logicalId(s.stack.consumer(sweeper.name).function);
    const rules = Object.values(s.template.findResources('AWS::Events::Rule')) as {
      Properties: { ScheduleExpression: string; Targets: { Arn: unknown }[] };
    }[];
    const usageEventsId = s.logicalId(s.stack.consumer(usageEvents.name).function);
    expect(rules.map((r) => [r.Properties.ScheduleExpression, r.Properties.Targets[0]?.Arn])).toEqual(
      expect.arrayContaining([
        ['rate(1 minute)', { 'Fn::GetAtt': [sweeperId, 'Arn'] }],
        ['rate(1 minute)', { 'Fn::GetAtt': [usageEventsId, 'Arn'] }],
      ]),
    );
    expect(rules).toHaveLength(2);
    const roleId = functions[sweeperId].Properties.Role['Fn::GetAtt'][0];
    const policies = Object.values(s.template.findResources('AWS::IAM::Policy')) as {
      Properties: {
        Roles: { Ref: string }[];
        PolicyDocument: { Statement: { Action: string | string[] }[] };
      };
    }[];
    const actions = policies
      .filter((p) => p.Properties.Roles.some((r) => r.Ref === roleId))
      .flatMap((p) => p.Properties.PolicyDocument.Statement.flatMap((st) => [st.Action].flat()))
      .filter((a) => a.startsWith('dynamodb:'))
      .sort();
    expect(actions).toEqual([
      'dynamodb:GetItem',
      'dynamodb:PutItem',
      'dynamodb:Query',
      'dynamodb:UpdateItem',
    ]);
    expect(functions[sweeperId].Properties.Environment.Variables.TABLE_NAME).toEqual({
      Ref: s.logicalId(s.stack.table),
    });
    expect(functions[sweeperId].Properties.Environment.Variables.WEBHOOK_QUEUE_URL).toEqual({
      Ref: s.logicalId(s.stack.queue(webhookQueue.name).queue),
    });
  });

  it('puts usage events on a bus of its own, from the usage-events function alone: PutEvents on that bus, the ledger outbox queried and updated, nothing more', () => {
    const buses = resourcesOf(s, 'AWS::Events::EventBus');
    expect(Object.keys(buses)).toEqual([s.logicalId(s.stack.usageEventBus)]);
    const busArn = { 'Fn::GetAtt': [s.logicalId(s.stack.usageEventBus), 'Arn'] };
    const publisherId = s.logicalId(s.stack.consumer(usageEvents.name).function);
    expect(functions[publisherId].Properties.Environment.Variables.USAGE_EVENT_BUS_NAME).toEqual({
      Ref: s.logicalId(s.stack.usageEventBus),
    });
    const roleOf = (id: string) => functions[id].Properties.Role['Fn::GetAtt'][0] as string;
    const statements = statementsOfRole(s, roleOf(publisherId));
    const putEvents = statements.filter((st) => actionsOf(st).some((a) => a.startsWith('events:')));
    expect(putEvents).toEqual([expect.objectContaining({ Action: 'events:PutEvents', Resource: busArn })]);
    expect(
      statements
        .flatMap(actionsOf)
        .filter((a) => a.startsWith('dynamodb:'))
        .sort(),
    ).toEqual(['dynamodb:Query', 'dynamodb:UpdateItem']);
    // No queue but its own failure queue, no bucket, secret or renderer.
    const failureQueueArn = {
      'Fn::GetAtt': [s.logicalId(s.stack.consumer(usageEvents.name).failureDestination), 'Arn'],
    };
    for (const st of statements.filter((st) => actionsOf(st).some((a) => a.startsWith('sqs:')))) {
      expect(st.Resource).toEqual(failureQueueArn);
    }
    expect(
      statements.flatMap(actionsOf).filter((a) => !/^(dynamodb|events|sqs|logs|xray|cloudwatch):/.test(a)),
    ).toEqual([]);
    // And no other function may put events anywhere.
    for (const id of Object.keys(functions).filter((f) => f !== publisherId)) {
      const role = functions[id].Properties.Role?.['Fn::GetAtt']?.[0];
      if (!role) continue;
      expect(
        statementsOfRole(s, role)
          .flatMap(actionsOf)
          .filter((a) => a.startsWith('events:')),
        id,
      ).toEqual([]);
    }
    expect(s.template.findOutputs('UsageEventBusName')).not.toEqual({});
  });

  it('documents the usage event schema: its source, detail-type and every detail field', () => {
    const doc = readFileSync(new URL('../../docs/billing.md', import.meta.url), 'utf8');
    expect(doc).toContain(`"source": "${USAGE_EVENT_SOURCE}"`);
    expect(doc).toContain(`"detail-type": "${USAGE_EVENT_DETAIL_TYPE}"`);
    const event = usageEventOf({
      account_id: 'a',
      job_id: 'job_1',
      month: '2026-11',
      kind: 'render',
      units: 1,
      pages: 1,
      bytes: 1,
      render_ms: 1,
      batch_id: null,
      completed_at: '2026-11-28T10:00:00.000Z',
    });
    const example = JSON.parse(/```json\n(\{\n {2}"source"[\s\S]*?)```/.exec(doc)?.[1] ?? '{}');
    expect(Object.keys(example).sort()).toEqual(Object.keys(event).sort());
    expect(Object.keys(example.detail).sort()).toEqual(Object.keys(event.detail).sort());
    // Each field is named in the field table (a row of its own, or one it shares).
    for (const field of Object.keys(event.detail))
      expect(doc, field).toMatch(new RegExp(`^\\|.*\`${field}\``, 'm'));
  });

  it('gives only the two renderers a layer: the one Chromium layer, on x86_64; the render queue consumer none', () => {
    // (aws-cdk-lib's handler that copies the dashboard into its bucket has the AWS CLI's.)
    const deployHandler = s.logicalId(s.stack.dashboard?.bucketDeploymentHandler as never);
    const layered = Object.entries(functions).filter(
      ([id, fn]) => fn.Properties.Layers !== undefined && id !== deployHandler,
    );
    expect(layered.map(([id]) => id).sort()).toEqual([rendererId(), asyncRendererId()].sort());
    const [layerId] = Object.entries(resourcesOf(s, 'AWS::Lambda::LayerVersion'))
      .filter(([, layer]) => /@sparticuz\/chromium/.test(layer.Properties.Description ?? ''))
      .map(([id]) => id);
    expect(functions[rendererId()].Properties).toMatchObject({
      Layers: [{ Ref: layerId }],
      Architectures: ['x86_64'],
      MemorySize: 2048,
      Timeout: 28,
    });
    // Sized for large documents: the async budget (600 s), a batch run's slice (0.5 s, rounded up
    // with it) and the renderer's 3 s, 3,008 MiB; no reserved concurrency (the consumer's event
    // source mapping bounds it).
    expect(functions[asyncRendererId()].Properties).toMatchObject({
      Layers: [{ Ref: layerId }],
      Architectures: ['x86_64'],
      MemorySize: 3008,
      Timeout: 604,
    });
    expect(functions[asyncRendererId()].Properties.ReservedConcurrentExecutions).toBeUndefined();
    // The consumer waits on the async renderer: its timeout is the budget and a minute (a batch
    // run's slice within it).
    expect(functions[workerId()].Properties).toMatchObject({ MemorySize: 512, Timeout: 660 });
    expect(functions[workerId()].Properties.Layers).toBeUndefined();
    s.template.hasResourceProperties('AWS::Lambda::LayerVersion', {
      CompatibleArchitectures: ['x86_64'],
      CompatibleRuntimes: [functions[rendererId()].Properties.Runtime],
      Description: Match.stringLikeRegexp(
        '^@sparticuz/chromium 143\\.0\\.4 for puppeteer-core 24\\.35\\.0, with fonts',
      ),
    });
  });

  it.each([
    ['renderer', () => rendererId()],
    ['async renderer', () => asyncRendererId()],
  ])(
    "grants the %s's role nothing but writing its own logs, kms:Sign on tagged signing keys and s3:GetObject on the fetched fonts' objects",
    (_, id) => {
      const roleId = functions[id()].Properties.Role['Fn::GetAtt'][0];
      const logGroupId = functions[id()].Properties.LoggingConfig.LogGroup.Ref;
      expect(resourcesOf(s, 'AWS::IAM::Role')[roleId].Properties.ManagedPolicyArns).toBeUndefined();
      const statements = statementsOfRole(s, roleId);
      const keys = Object.values(
        JSON.parse(functions[id()].Properties.Environment.Variables.FETCHED_FONTS) as Record<
          string,
          { key: string }[]
        >,
      )
        .flat()
        .map((f) => f.key);
      expect(statements).toEqual([
        {
          Effect: 'Allow',
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Resource: { 'Fn::GetAtt': [logGroupId, 'Arn'] },
        },
        {
          // The CJK fonts the layer leaves out (issue 42): each S3 asset's object, and nothing else.
          Effect: 'Allow',
          Action: 's3:GetObject',
          Resource: expect.arrayContaining(
            keys.map((key) => `arn:aws:s3:::cdk-hnb659fds-assets-123456789012-eu-west-1/${key}`),
          ),
        },
        {
          // Keys registered at run time: this account's and region's KMS keys with the tag only.
          Effect: 'Allow',
          Action: 'kms:Sign',
          // The test stack's account and region (its env): no other account's or region's key.
          Resource: 'arn:aws:kms:eu-west-1:123456789012:key/*',
          Condition: { StringEquals: { 'aws:ResourceTag/pdf-service:signing': 'true' } },
        },
      ]);
      expect(keys).toHaveLength(8);
      expect(statements[1]?.Resource).toHaveLength(8);
      expect(functions[id()].Properties.TracingConfig).toBeUndefined();
      const { FETCHED_FONTS, ...variables } = functions[id()].Properties.Environment.Variables;
      expect(variables).toEqual({
        NODE_OPTIONS: '--enable-source-maps',
        FONTCONFIG_FILE: '/opt/fonts/fonts.conf',
        CHROMIUM_PACK_DIR: '/opt/chromium',
        FETCHED_FONTS_BUCKET: 'cdk-hnb659fds-assets-123456789012-eu-west-1',
      });
      const families = JSON.parse(FETCHED_FONTS) as Record<string, { key: string; file: string }[]>;
      expect(Object.keys(families).sort()).toEqual([
        'Noto Sans JP',
        'Noto Sans KR',
        'Noto Sans SC',
        'Noto Sans TC',
      ]);
      for (const files of Object.values(families)) {
        expect(files.map((f) => f.file).sort()).toEqual([
          expect.stringMatching(/_400Regular\.ttf$/),
          expect.stringMatching(/_700Bold\.ttf$/),
        ]);
      }
    },
  );

  it('lets the renderers kms:Sign and the signing-keys function kms:GetPublicKey on tagged signing keys, and no role anything else of KMS keys', () => {
    const roleOf = (id: string) => functions[id].Properties.Role['Fn::GetAtt'][0];
    const kmsStatements = Object.keys(resourcesOf(s, 'AWS::IAM::Role'))
      .map(
        (roleId) =>
          [
            roleId,
            statementsOfRole(s, roleId).filter((st) =>
              actionsOf(st).some(
                (a) =>
                  a.startsWith('kms:') &&
                  ![
                    'kms:Decrypt',
                    'kms:GenerateDataKey*',
                    'kms:Encrypt',
                    'kms:ReEncrypt*',
                    'kms:GenerateDataKey',
                    'kms:DescribeKey',
                  ].includes(a),
              ),
            ),
          ] as const,
      )
      .filter(([, statements]) => statements.length > 0);
    const tagged = (action: string) => ({
      Effect: 'Allow',
      Action: action,
      Resource: 'arn:aws:kms:eu-west-1:123456789012:key/*',
      Condition: { StringEquals: { 'aws:ResourceTag/pdf-service:signing': 'true' } },
    });
    expect(Object.fromEntries(kmsStatements)).toEqual({
      [roleOf(rendererId())]: [tagged('kms:Sign')],
      [roleOf(asyncRendererId())]: [tagged('kms:Sign')],
      [roleOf(fnId('signing-keys'))]: [tagged('kms:GetPublicKey')],
    });
  });

  it("lets the destinations function (its probe) and the deliveries consumer sts:AssumeRole only with the service's external id, and no role anything else of STS or of another account (issue 36)", () => {
    const roleOf = (id: string) => functions[id].Properties.Role['Fn::GetAtt'][0];
    const stsStatements = Object.keys(resourcesOf(s, 'AWS::IAM::Role'))
      .map(
        (roleId) =>
          [
            roleId,
            statementsOfRole(s, roleId).filter((st) => actionsOf(st).some((a) => a.startsWith('sts:'))),
          ] as const,
      )
      .filter(([, statements]) => statements.length > 0);
    const assumeWithExternalId = {
      Effect: 'Allow',
      Action: 'sts:AssumeRole',
      Resource: 'arn:aws:iam::*:role/*',
      Condition: {
        StringLike: { 'sts:ExternalId': `${DESTINATION_EXTERNAL_ID_PREFIX}*` },
        Null: { 'sts:ExternalId': 'false' },
      },
    };
    const deliverer = s.logicalId(s.stack.consumer(deliveries.name).function);
    expect(Object.fromEntries(stsStatements)).toEqual({
      [roleOf(fnId('destinations'))]: [assumeWithExternalId],
      [roleOf(deliverer)]: [assumeWithExternalId],
    });
    // The deliverer's table rights: reads, the delivery's update, the webhook delivery's put.
    expect(
      statementsOfRole(s, roleOf(deliverer))
        .flatMap(actionsOf)
        .filter((a) => a.startsWith('dynamodb:'))
        .sort(),
    ).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    // No S3 right in the customer's bucket on our side: the assumed role's credentials carry them.
    const own = statementsOfRole(s, roleOf(fnId('destinations')));
    expect(own.filter((st) => actionsOf(st).some((a) => a.startsWith('s3:')))).toEqual([]);

    // Of every role, only that statement names any account's resources.
    const anyAccount = Object.keys(resourcesOf(s, 'AWS::IAM::Role')).flatMap((roleId) =>
      statementsOfRole(s, roleId).filter((st) => JSON.stringify(st.Resource ?? '').includes('::*:')),
    );
    expect(anyAccount.map((st) => st.Action)).toEqual(['sts:AssumeRole', 'sts:AssumeRole']);
  });

  it('lets the pdf and merges functions invoke the renderer, the render queue consumer the async renderer, and nothing else', () => {
    const invokers = Object.entries(resourcesOf(s, 'AWS::IAM::Role')).filter(([roleId]) =>
      statementsOfRole(s, roleId).some((st) => actionsOf(st).some((a) => a.startsWith('lambda:'))),
    );
    const roleOf = (id: string) => functions[id].Properties.Role['Fn::GetAtt'][0];
    expect(invokers.map(([id]) => id).sort()).toEqual(
      [roleOf(fnId('pdf')), roleOf(fnId('merges')), roleOf(workerId())].sort(),
    );
    const pairs: [caller: string, callee: string][] = [
      [fnId('pdf'), rendererId()],
      [fnId('merges'), rendererId()],
      [workerId(), asyncRendererId()],
    ];
    for (const [caller, callee] of pairs) {
      const invoke = statementsOfRole(s, roleOf(caller)).filter((st) =>
        actionsOf(st).some((a) => a.startsWith('lambda:')),
      );
      expect(invoke).toEqual([
        {
          Effect: 'Allow',
          Action: 'lambda:InvokeFunction',
          Resource: [
            { 'Fn::GetAtt': [callee, 'Arn'] },
            { 'Fn::Join': ['', [{ 'Fn::GetAtt': [callee, 'Arn'] }, ':*']] },
          ],
        },
      ]);
      expect(functions[caller].Properties.Environment.Variables.RENDERER_FUNCTION_NAME).toEqual({
        Ref: callee,
      });
    }
  });

  it('lets only the pdf, batches and merges functions, the render queue consumer, the batch output builder and the deliverer sign PDF URLs (GetObject and PutObject under pdf/), the first two and merges put orders, the consumers read and delete them; the assets function alone writes and deletes assets/, and what renders (pdf, merges, the render queue consumer) only reads them', () => {
    const bucketId = s.logicalId(s.stack.pdfBucket.bucket);
    // Roles with anything of the service's bucket (the renderers read the fetched fonts' objects in
    // CDK's assets bucket: the test above).
    const s3Users = Object.keys(resourcesOf(s, 'AWS::IAM::Role')).filter((roleId) =>
      statementsOfRole(s, roleId).some(
        (st) => actionsOf(st).some((a) => a.startsWith('s3:')) && JSON.stringify(st).includes(bucketId),
      ),
    );
    const pdfRole = functions[fnId('pdf')].Properties.Role['Fn::GetAtt'][0];
    const batchesRole = functions[fnId('batches')].Properties.Role['Fn::GetAtt'][0];
    // Besides aws-cdk-lib's handler that copies the dashboard into its own bucket.
    const deployHandler = s.logicalId(s.stack.dashboard?.bucketDeploymentHandler as never);
    const deployRole = functions[deployHandler].Properties.Role['Fn::GetAtt'][0];
    const workerRole = functions[workerId()].Properties.Role['Fn::GetAtt'][0];
    const mergesRole = functions[fnId('merges')].Properties.Role['Fn::GetAtt'][0];
    const builderRole =
      functions[s.logicalId(s.stack.consumer(batchOutputs.name).function)].Properties.Role['Fn::GetAtt'][0];
    const assetsRole = functions[fnId('assets')].Properties.Role['Fn::GetAtt'][0];
    const delivererRole =
      functions[s.logicalId(s.stack.consumer(deliveries.name).function)].Properties.Role['Fn::GetAtt'][0];
    expect(s3Users.filter((id) => id !== deployRole).sort()).toEqual(
      [pdfRole, batchesRole, workerRole, mergesRole, builderRole, assetsRole, delivererRole].sort(),
    );
    expect(JSON.stringify(statementsOfRole(s, deployRole))).not.toContain(bucketId);
    const under = (prefix: string) => ({
      'Fn::Join': ['', [{ 'Fn::GetAtt': [bucketId, 'Arn'] }, `/${prefix}/*`]],
    });
    const s3Statements = (roleId: string) =>
      statementsOfRole(s, roleId).filter((st) => actionsOf(st).some((a) => a.startsWith('s3:')));
    const readAssets = { Effect: 'Allow', Action: 's3:GetObject', Resource: under('assets') };
    expect(s3Statements(pdfRole)).toEqual([
      { Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: under('pdf') },
      { Effect: 'Allow', Action: 's3:PutObject', Resource: under('orders') },
      readAssets,
    ]);
    expect(s3Statements(batchesRole)).toEqual([
      { Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: under('pdf') },
      { Effect: 'Allow', Action: 's3:PutObject', Resource: under('orders') },
    ]);
    expect(s3Statements(workerRole)).toEqual([
      { Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: under('pdf') },
      { Effect: 'Allow', Action: ['s3:DeleteObject', 's3:GetObject'], Resource: under('orders') },
      readAssets,
    ]);
    expect(s3Statements(builderRole)).toEqual([
      { Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: under('pdf') },
      { Effect: 'Allow', Action: ['s3:DeleteObject', 's3:GetObject'], Resource: under('orders') },
    ]);
    // The deliverer reads a job's PDF (the bucket binding's pdf/ grant); nothing of orders/ or assets/.
    expect(s3Statements(delivererRole)).toEqual([
      { Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: under('pdf') },
    ]);
    // A merge reads its parts and writes the merged PDF under pdf/, puts an async merge's order,
    // and reads assets for its parts' renders.
    expect(s3Statements(mergesRole)).toEqual([
      { Effect: 'Allow', Action: ['s3:GetObject', 's3:PutObject'], Resource: under('pdf') },
      { Effect: 'Allow', Action: 's3:PutObject', Resource: under('orders') },
      readAssets,
    ]);
    // The assets function: its own prefix only, nothing of pdf/ or orders/.
    expect(s3Statements(assetsRole)).toEqual([
      {
        Effect: 'Allow',
        Action: ['s3:DeleteObject', 's3:GetObject', 's3:PutObject'],
        Resource: under('assets'),
      },
    ]);
  });

  it('feeds async renders through an encrypted render queue with a DLQ to the consumer, batch size 1, partial failures reported, alarms on depth, age and the DLQ', () => {
    const queueId = s.logicalId(s.stack.queue(renderQueue.name).queue);
    const dlqId = s.logicalId(s.stack.queue(renderQueue.name).deadLetterQueue);
    const queues = resourcesOf(s, 'AWS::SQS::Queue');
    // The queues and their DLQs (render, webhook, batch output) and the scheduled consumers' failure queues.
    expect(Object.keys(queues).sort()).toEqual(
      [
        queueId,
        dlqId,
        s.logicalId(s.stack.queue(webhookQueue.name).queue),
        s.logicalId(s.stack.queue(webhookQueue.name).deadLetterQueue),
        s.logicalId(s.stack.queue(batchOutputQueue.name).queue),
        s.logicalId(s.stack.queue(batchOutputQueue.name).deadLetterQueue),
        s.logicalId(s.stack.queue(deliveryQueue.name).queue),
        s.logicalId(s.stack.queue(deliveryQueue.name).deadLetterQueue),
        s.logicalId(s.stack.consumer(sweeper.name).failureDestination),
        s.logicalId(s.stack.consumer(usageEvents.name).failureDestination),
      ].sort(),
    );
    expect(queues[queueId].Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      // Six times the consumer's timeout (AWS's guidance for Lambda consumers).
      VisibilityTimeout: 6 * 660,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: 3 },
    });
    expect(queues[dlqId].Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      MessageRetentionPeriod: 14 * 86_400,
    });
    // TLS only, on both.
    for (const id of [queueId, dlqId]) {
      s.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      });
    }
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: workerId() },
      EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
      // A batch's items among its messages render as one run (issue 43).
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      ScalingConfig: { MaximumConcurrency: 10 },
    });
    // The consumer's, the webhook sender's, the batch output builder's and the deliverer's.
    s.template.resourceCountIs('AWS::Lambda::EventSourceMapping', 4);
    s.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: s.logicalId(s.stack.consumer(batchOutputs.name).function) },
      EventSourceArn: { 'Fn::GetAtt': [s.logicalId(s.stack.queue(batchOutputQueue.name).queue), 'Arn'] },
      BatchSize: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    // The API and the sweeper send to it; the consumer receives, deletes and holds messages back.
    const sends = (roleId: string) =>
      statementsOfRole(s, roleId).some((st) => actionsOf(st).includes('sqs:SendMessage'));
    const roleOf = (fnLogicalId: string) => functions[fnLogicalId].Properties.Role['Fn::GetAtt'][0];
    expect(sends(roleOf(fnId('pdf')))).toBe(true);
    expect(sends(roleOf(s.logicalId(s.stack.consumer(sweeper.name).function)))).toBe(true);
    expect(
      statementsOfRole(s, roleOf(workerId())).some(
        (st) =>
          actionsOf(st).includes('sqs:ChangeMessageVisibility') &&
          actionsOf(st).includes('sqs:DeleteMessage'),
      ),
    ).toBe(true);
    const alarmOn = (metric: string, queue: string) =>
      s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SQS',
        MetricName: metric,
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queue, 'QueueName'] } }],
      });
    alarmOn('ApproximateNumberOfMessagesVisible', queueId);
    alarmOn('ApproximateAgeOfOldestMessage', queueId);
    alarmOn('ApproximateNumberOfMessagesVisible', dlqId);
  });

  it('gives the API-key secret to the functions that authenticate (keys are looked up on every route), and to no other', () => {
    const secretId = s.logicalId(s.stack.apiKeySecret);
    const readers = Object.entries(functions)
      .filter(([, fn]) =>
        statementsOfRole(s, fn.Properties.Role['Fn::GetAtt'][0]).some((st) =>
          actionsOf(st).includes('secretsmanager:GetSecretValue'),
        ),
      )
      .map(([id]) => id);
    // A session-only route still looks a presented key up: a valid one answers 403, an unknown one 401.
    const expected = resources
      .filter((r) => r.needs.issuesApiKeys === true || Object.values(r.routes).length > 0)
      .map((r) => r.name);
    expect(expected).toEqual(expect.arrayContaining(['pdf', 'api-keys', 'me', 'usage']));
    // And the webhook sender (signing secrets are sealed under a key derived from it) and the
    // render worker (a protection's passwords are sealed in async orders under another).
    expect(readers.sort()).toEqual(
      expected
        .map(fnId)
        .concat(
          s.logicalId(s.stack.consumer(webhookSender.name).function),
          s.logicalId(s.stack.consumer(renderWorker.name).function),
        )
        .sort(),
    );
    for (const id of readers) {
      expect(functions[id].Properties.Environment.Variables.API_KEY_SECRET_ID).toEqual({ Ref: secretId });
    }
  });

  it('configures every API function with what its declaration needs, and nothing more', () => {
    for (const r of resources) {
      const wiring = wiringOf(r);
      const variables = functions[fnId(r.name)].Properties.Environment.Variables;
      expect(variables).toMatchObject({
        RENDER_BUDGET_MS: '25000',
        DOWNLOAD_URL_TTL_SECONDS: '900',
        PDF_RETENTION_DAYS: '30',
      });
      const bound = {
        TABLE_NAME: wiring.table ? { Ref: s.logicalId(s.stack.table) } : undefined,
        BUCKET_NAME: wiring.pdfBucket ? { Ref: s.logicalId(s.stack.pdfBucket.bucket) } : undefined,
        COGNITO_USER_POOL_ID: wiring.userPool
          ? { Ref: s.logicalId(s.stack.userPool.userPool as never) }
          : undefined,
        // The service's app client and the dashboard's.
        COGNITO_CLIENT_ID: wiring.userPool
          ? {
              'Fn::Join': [
                '',
                [
                  { Ref: s.logicalId(s.stack.userPool.userPoolClient as never) },
                  ',',
                  { Ref: s.logicalId(s.stack.dashboard?.client as never) },
                ],
              ],
            }
          : undefined,
        RENDERER_FUNCTION_NAME: wiring.renderer ? { Ref: rendererId() } : undefined,
      };
      for (const [name, value] of Object.entries(bound))
        expect(variables[name], `${r.name} ${name}`).toEqual(value);
    }
    // The fallback answers from the route table alone, and sends / to the dashboard.
    expect(functions[fnId('fallback')].Properties.Environment.Variables).toEqual({
      NODE_OPTIONS: '--enable-source-maps',
      DASHBOARD_URL: {
        'Fn::Join': [
          '',
          [
            'https://',
            { 'Fn::GetAtt': [s.logicalId(s.stack.dashboard?.distribution as never), 'DomainName'] },
            '/',
          ],
        ],
      },
    });
  });

  it('keeps the pdf function inside API Gateway 30 s and the renderer inside the pdf function', () => {
    const pdfTimeout = functions[fnId('pdf')].Properties.Timeout;
    const rendererTimeout = functions[rendererId()].Properties.Timeout;
    expect(pdfTimeout).toBeLessThan(30);
    expect(rendererTimeout).toBeLessThan(pdfTimeout);
  });

  it('has the single table: on demand, PITR, TTL, the indexes of tableSchema, retained', () => {
    s.template.resourceCountIs('AWS::DynamoDB::Table', 1);
    s.template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
      Properties: Match.objectLike({
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        TimeToLiveSpecification: { AttributeName: tableSchema.ttlAttribute, Enabled: true },
        KeySchema: [
          { AttributeName: tableSchema.partitionKey, KeyType: 'HASH' },
          { AttributeName: tableSchema.sortKey, KeyType: 'RANGE' },
        ],
        GlobalSecondaryIndexes: tableSchema.globalSecondaryIndexes.map((index) =>
          Match.objectLike({
            IndexName: index.indexName,
            KeySchema: [
              { AttributeName: index.partitionKey, KeyType: 'HASH' },
              { AttributeName: index.sortKey, KeyType: 'RANGE' },
            ],
          }),
        ),
      }),
    });
  });

  it('has a private, encrypted, TLS-only PDF bucket that expires PDFs after the retention period', () => {
    s.template.hasResource('AWS::S3::Bucket', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
        },
        LifecycleConfiguration: {
          Rules: Match.arrayWith([
            Match.objectLike({ Prefix: 'pdf/', ExpirationInDays: 30, Status: 'Enabled' }),
            // The editor's previews (issue 40) are kept a day.
            Match.objectLike({ Prefix: 'previews/', ExpirationInDays: 1, Status: 'Enabled' }),
          ]),
        },
        // Only the dashboard's page may read PDFs from a script (its preview).
        CorsConfiguration: {
          CorsRules: [
            {
              AllowedMethods: ['GET'],
              AllowedOrigins: [
                {
                  'Fn::Join': [
                    '',
                    [
                      'https://',
                      { 'Fn::GetAtt': [s.logicalId(s.stack.dashboard?.distribution as never), 'DomainName'] },
                    ],
                  ],
                },
              ],
              MaxAge: 600,
            },
          ],
        },
      }),
    });
    s.template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('has a user pool and a public app client, and an API-key secret generated at deploy time', () => {
    s.template.hasResourceProperties('AWS::Cognito::UserPool', {
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      UsernameAttributes: ['email'],
    });
    const client = resourcesOf(s, 'AWS::Cognito::UserPoolClient')[
      s.logicalId(s.stack.userPool.userPoolClient as never)
    ];
    expect(client.Properties).toMatchObject({
      GenerateSecret: false,
      AllowedOAuthFlowsUserPoolClient: false,
    });
    expect(client.Properties.ExplicitAuthFlows.sort()).toEqual([
      'ALLOW_ADMIN_USER_PASSWORD_AUTH',
      'ALLOW_REFRESH_TOKEN_AUTH',
      'ALLOW_USER_SRP_AUTH',
    ]);
    s.template.hasResource('AWS::SecretsManager::Secret', {
      DeletionPolicy: 'Retain',
      Properties: Match.objectLike({ GenerateSecretString: Match.objectLike({ PasswordLength: 64 }) }),
    });
  });

  it('alarms on renderer errors and throttles', () => {
    for (const metric of ['Errors', 'Throttles']) {
      s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/Lambda',
        MetricName: metric,
        Dimensions: [{ Name: 'FunctionName', Value: { Ref: rendererId() } }],
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
    }
  });

  it('logs API access and outputs the API URL and the user pool and client ids', () => {
    s.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      AutoDeploy: true,
      AccessLogSettings: { DestinationArn: Match.anyValue(), Format: Match.stringLikeRegexp('requestId') },
    });
    const outputs = s.template.findOutputs('*');
    expect(Object.keys(outputs)).toEqual(
      expect.arrayContaining(['ApiUrl', 'UserPoolId', 'UserPoolClientId', 'ApiKeysUrl']),
    );
    expect(JSON.stringify(outputs.ApiKeysUrl?.Value)).toContain('v1/api-keys');
  });

  it('passes cdk-nag AwsSolutions with every finding acknowledged', () => {
    expect(s.nagFindings).toEqual([]);
  });
});

describe('a throwaway stack with an existing user pool and custom settings', () => {
  let s: Synthesized;

  beforeAll(() => {
    s = synthServiceStack({
      props: {
        retainData: false,
        existingUserPool: { userPoolId: 'eu-west-1_AbCdEf123', userPoolClientId: 'client123' },
        plans: {
          free: { monthlyRenders: 5, rendersPerMinute: 1 },
          team: { monthlyRenders: 500, rendersPerMinute: 20 },
        },
        limits: { maxPdfPages: 200 },
        renderBudgetMs: 20_000,
        pdfRetentionDays: 7,
        rendererMemorySizeMiB: 3008,
        taggedPdf: true,
      },
    });
  });

  it('tells the renderers (sync and async), and only them, to print tagged PDFs', () => {
    const functions = s.template.findResources('AWS::Lambda::Function');
    const tagged = Object.entries(functions)
      .filter(([, fn]) => fn.Properties.Environment?.Variables?.PDF_TAGGED === 'true')
      .map(([id]) => id);
    expect(tagged.sort()).toEqual(
      [s.logicalId(s.stack.renderer.function), s.logicalId(s.stack.asyncRenderer.function)].sort(),
    );
  });

  it('creates no user pool and points the functions at the given one', () => {
    s.template.resourceCountIs('AWS::Cognito::UserPool', 0);
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          COGNITO_USER_POOL_ID: 'eu-west-1_AbCdEf123',
          COGNITO_CLIENT_ID: 'client123',
        }),
      },
    });
    expect(s.template.findOutputs('UserPoolId').UserPoolId?.Value).toBe('eu-west-1_AbCdEf123');
  });

  it('passes plans, limits, budget and retention to the functions and the bucket', () => {
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          PLANS: JSON.stringify({
            free: { monthlyRenders: 5, rendersPerMinute: 1 },
            team: { monthlyRenders: 500, rendersPerMinute: 20 },
          }),
          MAX_PDF_PAGES: '200',
          RENDER_BUDGET_MS: '20000',
          PDF_RETENTION_DAYS: '7',
        }),
      },
    });
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Layers: Match.anyValue(),
      MemorySize: 3008,
      Timeout: 23,
    });
    s.template.hasResourceProperties('AWS::S3::Bucket', {
      LifecycleConfiguration: { Rules: Match.arrayWith([Match.objectLike({ ExpirationInDays: 7 })]) },
    });
  });

  it('deletes its data with the stack', () => {
    s.template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Delete',
      Properties: Match.objectLike({ DeletionProtectionEnabled: false }),
    });
    s.template.hasResource('AWS::S3::Bucket', { DeletionPolicy: 'Delete' });
    s.template.hasResource('AWS::SecretsManager::Secret', { DeletionPolicy: 'Delete' });
    s.template.hasResourceProperties('Custom::S3AutoDeleteObjects', { BucketName: Match.anyValue() });
  });

  it('still passes cdk-nag AwsSolutions', () => {
    expect(s.nagFindings).toEqual([]);
  });
});
