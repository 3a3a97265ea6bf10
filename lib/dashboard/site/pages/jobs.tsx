/**
 * Recent renders: id, status, source (template and version, the batch it is an item of), size,
 * pages, duration, errors, what happened inside the page (diagnostics), and a download with a
 * freshly signed link. Async jobs move on by themselves: the list is read again while any job on
 * screen is unfinished (live.ts).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Diagnostics, Job } from '../api.js';
import { CardTable, CopyButton, describeError, ErrorMessage, Loading, PageHeading } from '../components.js';
import { useDashboard } from '../context.js';
import { formatBytes, formatDateTime, formatDuration } from '../format.js';
import { usePolling } from '../live.js';
import { href } from '../routes.js';
import { type Pages, usePages } from './paging.js';

export const STATUS_LABEL: Record<Job['status'], string> = {
  pending: 'Pending',
  rendering: 'Rendering',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

export const Download = ({ job }: { job: Job }) => {
  const { api } = useDashboard();
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  if (job.status !== 'completed') return null;
  // The list's links expire (15 minutes): ask for the job again for a fresh one, then follow it.
  const download = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const fresh = await api.request<Job>(`v1/pdf/${encodeURIComponent(job.id)}`);
      if (!fresh.download_url) throw new Error('The file is no longer kept (retention period).');
      const a = document.createElement('a');
      a.href = fresh.download_url;
      a.download = `${job.id}.pdf`;
      a.click();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" class="small" onClick={download} disabled={busy}>
        Download<span class="visually-hidden"> PDF of {job.id}</span>
      </button>
      {error !== undefined && (
        <span class="error" role="alert">
          {describeError(error)}
        </span>
      )}
    </>
  );
};

const DIAGNOSTIC_LABEL: Record<Diagnostics['entries'][number]['type'], string> = {
  console: 'Console error',
  page_error: 'Uncaught error',
  resource: 'Resource',
  missing_glyph: 'Missing glyphs',
  unsafe_link: 'Unsafe link removed',
};

const DiagnosticsList = ({ diagnostics }: { diagnostics: Diagnostics | null | undefined }) => {
  const entries = diagnostics?.entries ?? [];
  if (entries.length === 0) return <>{diagnostics ? 'None' : '—'}</>;
  return (
    <details class="diagnostics">
      <summary>
        {entries.length} {entries.length === 1 ? 'entry' : 'entries'}
        {diagnostics?.truncated ? ' (more left out)' : ''}
      </summary>
      <ul>
        {entries.map((d, i) => (
          <li key={i}>
            <strong>{DIAGNOSTIC_LABEL[d.type]}</strong>
            {d.count > 1 ? ` ×${d.count}` : ''}: {d.message}
            {d.url && <span class="mono url"> {d.url}</span>}
          </li>
        ))}
      </ul>
    </details>
  );
};

const JobId = ({ id }: { id: string }) => {
  const ref = useRef<HTMLElement>(null);
  return (
    <span class="job-id">
      <code ref={ref}>{id}</code> <CopyButton text={id} what={`job id ${id}`} fallback={ref} />
    </span>
  );
};

/** A job that can still change: polling goes on while one is on screen. */
export const unfinished = (job: Job): boolean => job.status === 'pending' || job.status === 'rendering';

/** The jobs of `jobs` as a table (cards on a phone), read again while any of them is unfinished. */
export const JobsTable = ({
  jobs,
  caption,
  showBatch = true,
  selection,
}: {
  jobs: Pages<Job>;
  caption: string;
  /** A batch's own page leaves out the link back to it. */
  showBatch?: boolean;
  /** Completed jobs get a checkbox to pick them for a merge (the Jobs page). */
  selection?: { readonly selected: readonly string[]; readonly toggle: (id: string) => void };
}) => {
  usePolling(jobs.items.some(unfinished), jobs.refresh);
  return (
    <CardTable
      kind="jobs"
      caption={caption}
      columns={[
        'Created',
        'Status',
        'Source',
        { label: 'Pages', num: true },
        { label: 'Size', num: true },
        { label: 'Duration', num: true },
        'Error',
        'Diagnostics',
        { label: 'Download', hidden: true },
      ]}
    >
      {jobs.items.map((job) => (
        <tr key={job.id} data-job-id={job.id}>
          <th scope="row">
            {selection && job.status === 'completed' && (
              <input
                type="checkbox"
                data-field="select"
                aria-label={`Merge ${job.id}`}
                checked={selection.selected.includes(job.id)}
                onChange={() => selection.toggle(job.id)}
              />
            )}
            <span class="created">{formatDateTime(job.created_at)}</span>
            <JobId id={job.id} />
          </th>
          <td data-label="Status">
            <span class={`status ${job.status}`}>{STATUS_LABEL[job.status]}</span>
            {job.mode === 'async' && <span class="muted"> (async)</span>}
          </td>
          <td data-label="Source">
            {job.template_id ? (
              <a href={href.template(job.template_id)}>
                Template{job.template_version ? ` v${job.template_version}` : ''}
              </a>
            ) : (
              'Inline HTML'
            )}
            {showBatch && job.batch_id && (
              <span class="batch-of">
                {' in '}
                <a href={href.batch(job.batch_id)} data-field="batch">
                  batch <span class="mono">{job.batch_id}</span>
                </a>
              </span>
            )}
          </td>
          <td class="num" data-label="Pages">
            {job.page_count ?? '—'}
          </td>
          <td class="num" data-label="Size">
            {formatBytes(job.file_size_bytes)}
          </td>
          <td class="num" data-label="Duration">
            {formatDuration(job.render_duration_ms)}
          </td>
          <td data-label="Error">
            {job.error ? (
              <span class="error-text">
                <code>{job.error.code}</code> {job.error.message}
              </span>
            ) : (
              '—'
            )}
          </td>
          <td data-label="Diagnostics">
            <DiagnosticsList diagnostics={job.diagnostics} />
          </td>
          <td class="row-actions">
            <Download job={job} />
          </td>
        </tr>
      ))}
    </CardTable>
  );
};

type LaterPages = typeof import('./later.js');

/** The merge of the jobs picked, from the later chunk (pages/later.ts), loaded when a first job is picked. */
const useMergeSelected = (wanted: boolean) => {
  const [loaded, setLoaded] = useState<LaterPages['MergeSelected'] | undefined>(undefined);
  useEffect(() => {
    if (wanted && !loaded) import('./later.js').then((pages) => setLoaded(() => pages.MergeSelected));
  }, [wanted, loaded]);
  return loaded;
};

export const JobsPage = () => {
  const { api } = useDashboard();
  const jobs = usePages<Job>((limit, offset) => api.request(`v1/pdf?limit=${limit}&offset=${offset}`));
  const [selected, setSelected] = useState<readonly string[]>([]);
  const MergeSelected = useMergeSelected(selected.length > 0);
  const toggle = (id: string) =>
    setSelected((now) => (now.includes(id) ? now.filter((s) => s !== id) : [...now, id]));
  return (
    <>
      <PageHeading>Jobs</PageHeading>
      <p class="lead">
        Your renders, newest first, from the dashboard and from your API keys alike. Async renders and batch
        items update here as they finish.
      </p>
      <p>
        <button type="button" onClick={jobs.reload} disabled={jobs.loading}>
          Refresh
        </button>
      </p>
      {jobs.loading && jobs.items.length === 0 && <Loading what="jobs" />}
      <ErrorMessage error={jobs.error} />
      {!jobs.loading && !jobs.error && jobs.items.length === 0 && <p class="muted">No renders yet.</p>}
      {MergeSelected && jobs.items.length > 0 && (
        <MergeSelected
          selected={selected}
          done={() => {
            setSelected([]);
            jobs.reload();
          }}
        />
      )}
      {jobs.items.length > 0 && (
        <JobsTable jobs={jobs} caption="Jobs, newest first" selection={{ selected, toggle }} />
      )}
      {jobs.more && (
        <button type="button" onClick={jobs.loadMore} disabled={jobs.loading}>
          Older jobs
        </button>
      )}
    </>
  );
};
