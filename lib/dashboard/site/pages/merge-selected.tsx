/**
 * The jobs picked on the Jobs page merged into one (POST /v1/merges), in the order they were
 * picked, with the merged PDF's download: in the later chunk, loaded once a first job is picked.
 */
import { useState } from 'preact/hooks';
import type { Job } from '../api.js';
import { describeError } from '../components.js';
import { useDashboard } from '../context.js';
import { Download, STATUS_LABEL } from './jobs.js';

export const MergeSelected = ({ selected, done }: { selected: readonly string[]; done: () => void }) => {
  const { api } = useDashboard();
  const [merged, setMerged] = useState<Job | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const merge = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const body = { parts: selected.map((job_id) => ({ job_id })) };
      setMerged(await api.request<Job>('v1/merges', { method: 'POST', body }));
      done();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <p class="merge-selected" data-field="merge">
      <button type="button" onClick={merge} disabled={busy || selected.length < 2}>
        Merge {selected.length} selected
      </button>{' '}
      {selected.length < 2 && (
        <span class="muted">Pick two or more completed jobs to merge them into one PDF.</span>
      )}
      {merged && (
        <span data-field="merged">
          Merged into <code>{merged.id}</code> ({merged.page_count ?? '—'} pages,{' '}
          {STATUS_LABEL[merged.status].toLowerCase()}) <Download job={merged} />
        </span>
      )}
      {error !== undefined && (
        <span class="error" role="alert">
          {describeError(error)}
        </span>
      )}
    </p>
  );
};
