/**
 * PDF_RETENTION_DAYS drives both expiries, on a stack of its own with a shortened retention (one
 * day): the PDF's (file_expires_at, then no link and file_expired) and the job record's (twice as
 * long, expires_at in the table). The job is made to be as old as the test needs by moving its
 * created_at back in the table; the stack's renderer is the memory renderer (a small real PDF, no Chromium).
 */
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createMemoryRenderer } from '../../functions/adapters/memory/renderer.js';
import { dynamoDbClient, useLocalStack } from '../helpers/local-stack.js';

const local = useLocalStack({ env: { PDF_RETENTION_DAYS: '1' }, renderer: createMemoryRenderer() });
const DAY_MS = 86_400_000;

describe('PDF_RETENTION_DAYS', () => {
  it("sets when a job's PDF expires and when its record does", async () => {
    const token = await local.sessionToken('retention-1');
    const job = (await local.api('/v1/pdf', { method: 'POST', token, body: { html: '<p>x</p>' } })).json;
    expect(job).toMatchObject({
      status: 'completed',
      file_expired: false,
      file_expires_at: new Date(Date.parse(job.created_at) + DAY_MS).toISOString(),
    });
    expect((await fetch(job.download_url)).status).toBe(200);

    const db = DynamoDBDocumentClient.from(dynamoDbClient(local.stack));
    const key = { PK: 'ACCOUNT#retention-1', SK: `JOB#${job.id}` };
    const record = await db.send(new GetCommand({ TableName: local.stack.tableName, Key: key }));
    expect(record.Item?.expires_at).toBe(Math.floor((Date.parse(job.created_at) + 2 * DAY_MS) / 1000));

    const dayAndSecondAgo = new Date(Date.now() - DAY_MS - 1000).toISOString();
    await db.send(
      new UpdateCommand({
        TableName: local.stack.tableName,
        Key: key,
        UpdateExpression: 'SET created_at = :at',
        ExpressionAttributeValues: { ':at': dayAndSecondAgo },
      }),
    );
    const expired = await local.api(`/v1/pdf/${job.id}`, { token });
    expect(expired.json).toMatchObject({
      status: 'completed',
      download_url: null,
      file_expired: true,
      file_expires_at: new Date(Date.parse(dayAndSecondAgo) + DAY_MS).toISOString(),
    });
  });
});
