/**
 * Issue 33's done-when, the cloud's half: a consumer added as an entry in the tables, its folder
 * and its use case (test/fixtures/consumers/) gets its function, its queue with a dead-letter
 * queue, its event source mapping and exactly the grants its entry declares, with no line in lib/.
 * Its local half is test/integration/consumer-fixture.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { notesQueue, noteTaker, tablesWithNoteTaker } from '../fixtures/consumers/table.js';
import { type Synthesized, synthServiceStack } from '../helpers/cdk-synth.js';

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation JSON is inspected by the assertions
type Json = any;

const statementsOfRole = (s: Synthesized, roleId: string): Json[] =>
  Object.values(s.template.findResources('AWS::IAM::Policy'))
    .filter((p: Json) => (p.Properties.Roles as Json[]).some((r) => r.Ref === roleId))
    .flatMap((p: Json) => p.Properties.PolicyDocument.Statement);

describe('a consumer added to the tables', () => {
  let s: Synthesized;
  let fnId: string;
  let fn: Json;
  let queueId: string;

  beforeAll(() => {
    s = synthServiceStack({ props: { asyncTables: tablesWithNoteTaker } });
    fnId = s.logicalId(s.stack.consumer(noteTaker.name).function);
    fn = s.template.findResources('AWS::Lambda::Function')[fnId];
    queueId = s.logicalId(s.stack.queue(notesQueue.name).queue);
  });

  it('has its function, from its folder, with its memory, timeout and table, and passes cdk-nag', () => {
    expect(fn.Properties).toMatchObject({ MemorySize: 128, Timeout: 10 });
    expect(fn.Properties.Environment.Variables.TABLE_NAME).toEqual({ Ref: s.logicalId(s.stack.table) });
    expect(fn.Properties.Environment.Variables.WEBHOOK_QUEUE_URL).toBeUndefined();
    expect(fn.Properties.Environment.Variables.BUCKET_NAME).toBeUndefined();
    expect(s.stack.consumer(noteTaker.name).function.resourceName).toBe('note-taker');
    expect(s.nagFindings).toEqual([]);
  });

  it('has its queue, encrypted, with a dead-letter queue after its receives, and an alarm on it', () => {
    const queues: Record<string, Json> = s.template.findResources('AWS::SQS::Queue');
    const dlqId = s.logicalId(s.stack.queue(notesQueue.name).deadLetterQueue);
    expect(queues[queueId].Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      // Six times its consumer's 10 s.
      VisibilityTimeout: 60,
      MessageRetentionPeriod: 86_400,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] }, maxReceiveCount: 2 },
    });
    expect(queues[dlqId].Properties.MessageRetentionPeriod).toBe(7 * 86_400);
    s.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [dlqId, 'QueueName'] } }],
    });
    expect(s.stack.monitoring.alarms).toContain(s.stack.queue(notesQueue.name).deadLetterAlarm);
  });

  it('is fed by its event source mapping: its batch size and concurrency, partial batch failures', () => {
    const mappings = Object.values(s.template.findResources('AWS::Lambda::EventSourceMapping')).filter(
      (m: Json) => m.Properties.FunctionName.Ref === fnId,
    );
    expect(mappings.map((m: Json) => m.Properties)).toEqual([
      expect.objectContaining({
        EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
        BatchSize: 5,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: 2 },
      }),
    ]);
  });

  it('is granted what its entry declares and nothing else: PutItem on the table, consuming its queue', () => {
    const roleId = fn.Properties.Role['Fn::GetAtt'][0];
    const actions = statementsOfRole(s, roleId)
      .flatMap((st: Json) => [st.Action].flat())
      .filter((a: string) => !/^(logs|xray):/.test(a))
      .sort();
    expect(actions).toEqual([
      'dynamodb:PutItem',
      'sqs:ChangeMessageVisibility',
      'sqs:DeleteMessage',
      'sqs:GetQueueAttributes',
      'sqs:GetQueueUrl',
      'sqs:ReceiveMessage',
    ]);
    const sqs = statementsOfRole(s, roleId).filter((st: Json) =>
      [st.Action].flat().some((a: string) => a.startsWith('sqs:')),
    );
    expect(sqs.map((st: Json) => st.Resource)).toEqual([{ 'Fn::GetAtt': [queueId, 'Arn'] }]);
  });

  it('leaves the service’s own consumers as they are', () => {
    const plain = synthServiceStack();
    expect([...s.stack.consumers.keys()]).toEqual([...plain.stack.consumers.keys(), noteTaker.name]);
    expect([...s.stack.queues.keys()]).toEqual([...plain.stack.queues.keys(), notesQueue.name]);
  });
});
