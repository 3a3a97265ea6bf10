/**
 * Batches: each with its jobs counted by status and its progress, read again while any is
 * processing; a batch's page lists its jobs in item order (page by page), each completed one with
 * its download.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Batch, Job } from '../api.js';
import { CardTable, ErrorMessage, Loading, PageHeading } from '../components.js';
import { useDashboard } from '../context.js';
import { formatDateTime, formatNumber } from '../format.js';
import { usePolling } from '../live.js';
import { href } from '../routes.js';
import { JobsTable } from './jobs.js';
import { usePages } from './paging.js';

const processing = (b: Batch): boolean => b.status === 'processing';
/** Still changing: its jobs, or its outputs (built once it completed). */
const changing = (b: Batch): boolean => processing(b) || b.output_status === 'pending';

/** A batch's merged PDF and ZIP (`output`): being built, their downloads, or why they failed. */
const Outputs = ({ batch }: { batch: Batch }) => {
  if (batch.output_status === 'failed')
    return (
      <span class="status failed" data-field="outputs">
        Not built: {batch.output_error}
      </span>
    );
  if (batch.output_status !== 'ready')
    return <span data-field="outputs">Built when the batch completes</span>;
  return (
    <span class="row-actions" data-field="outputs">
      {batch.merged_pdf_url && (
        <a class="button" href={batch.merged_pdf_url} data-field="merged-pdf" download>
          Merged PDF
        </a>
      )}{' '}
      {batch.zip_url && (
        <a class="button" href={batch.zip_url} data-field="zip" download>
          ZIP
        </a>
      )}
    </span>
  );
};

/** "3 of 5 done" with a bar, and the counts behind it. */
const Progress = ({ batch }: { batch: Batch }) => {
  const { counts, total } = batch;
  const done = counts.completed + counts.failed;
  return (
    <span class="batch-progress">
      <progress max={total} value={done} aria-label={`Batch ${batch.id}: ${done} of ${total} jobs done`} />
      <span data-field="progress">
        {formatNumber(done)} of {formatNumber(total)} done
      </span>
      <span class="counts" data-field="counts">
        {(['pending', 'rendering', 'completed', 'failed'] as const)
          .filter((s) => counts[s] > 0)
          .map((s) => (
            <span key={s} class={`status ${s}`}>
              {formatNumber(counts[s])} {s}
            </span>
          ))}
      </span>
    </span>
  );
};

const Source = ({ batch }: { batch: Batch }) =>
  batch.template_id ? (
    <a href={href.template(batch.template_id)}>
      Template{batch.template_version ? ` v${batch.template_version}` : ''}
    </a>
  ) : (
    <>Inline HTML</>
  );

export const BatchesPage = () => {
  const { api } = useDashboard();
  const batches = usePages<Batch>((limit, offset) =>
    api.request(`v1/batches?limit=${limit}&offset=${offset}`),
  );
  usePolling(batches.items.some(processing), batches.refresh);
  return (
    <>
      <PageHeading>Batches</PageHeading>
      <p class="lead">
        Many renders of one template in one request (<code>POST /v1/batches</code>), newest first. Progress
        updates here while a batch is processing.
      </p>
      {batches.loading && batches.items.length === 0 && <Loading what="batches" />}
      <ErrorMessage error={batches.error} />
      {!batches.loading && !batches.error && batches.items.length === 0 && (
        <p class="muted">
          No batches yet. Send up to 1,000 items to <code>POST /v1/batches</code> with an API key: each
          becomes a job, listed here and under Jobs.
        </p>
      )}
      {batches.items.length > 0 && (
        <CardTable
          kind="batches"
          caption="Batches, newest first"
          columns={['Batch', 'Status', 'Progress', 'Source']}
        >
          {batches.items.map((b) => (
            <tr key={b.id} data-batch-id={b.id}>
              <th scope="row">
                <span class="created">{formatDateTime(b.created_at)}</span>
                <a class="mono batch-link" href={href.batch(b.id)}>
                  {b.id}
                </a>
              </th>
              <td data-label="Status">
                <span class={`status ${b.status}`}>
                  {b.status === 'processing' ? 'Processing' : 'Completed'}
                </span>
              </td>
              <td data-label="Progress">
                <Progress batch={b} />
              </td>
              <td data-label="Source">
                <Source batch={b} />
              </td>
            </tr>
          ))}
        </CardTable>
      )}
      {batches.more && (
        <button type="button" onClick={batches.loadMore} disabled={batches.loading}>
          Older batches
        </button>
      )}
    </>
  );
};

export const BatchPage = ({ id }: { id: string }) => {
  const { api } = useDashboard();
  const path = `v1/batches/${encodeURIComponent(id)}`;
  const [batch, setBatch] = useState<Batch | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const load = () => api.request<Batch>(path).then(setBatch);
  useEffect(() => {
    load().catch(setError);
  }, [path]);
  usePolling(batch !== undefined && changing(batch), load);
  const jobs = usePages<Job>((limit, offset) => api.request(`${path}/jobs?limit=${limit}&offset=${offset}`));
  return (
    <>
      <p class="back">
        <a href={href.batches}>← Batches</a>
      </p>
      <PageHeading>Batch {id}</PageHeading>
      <ErrorMessage error={error} />
      {!batch && !error && <Loading what="the batch" />}
      {batch && (
        <dl class="facts">
          <div>
            <dt>Status</dt>
            <dd>
              <span class={`status ${batch.status}`} data-field="batch-status">
                {batch.status === 'processing'
                  ? 'Processing'
                  : `Completed ${formatDateTime(batch.completed_at)}`}
              </span>
            </dd>
          </div>
          <div>
            <dt>Progress</dt>
            <dd>
              <Progress batch={batch} />
            </dd>
          </div>
          <div>
            <dt>Source</dt>
            <dd>
              <Source batch={batch} />
            </dd>
          </div>
          {batch.output && (
            <div>
              <dt>Outputs</dt>
              <dd>
                <Outputs batch={batch} />
              </dd>
            </div>
          )}
          <div>
            <dt>Created</dt>
            <dd>{formatDateTime(batch.created_at)}</dd>
          </div>
          {batch.webhook_id && (
            <div>
              <dt>Webhook</dt>
              <dd>
                <a class="mono" href={href.webhook(batch.webhook_id)}>
                  {batch.webhook_id}
                </a>
              </dd>
            </div>
          )}
        </dl>
      )}
      <h2>Jobs, in item order</h2>
      {jobs.loading && jobs.items.length === 0 && <Loading what="jobs" />}
      <ErrorMessage error={jobs.error} />
      {jobs.items.length > 0 && (
        <JobsTable jobs={jobs} caption={`Jobs of batch ${id}, in item order`} showBatch={false} />
      )}
      {jobs.more && (
        <button type="button" onClick={jobs.loadMore} disabled={jobs.loading}>
          More jobs
        </button>
      )}
    </>
  );
};
