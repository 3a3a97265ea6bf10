/**
 * Assets: the account's images and fonts (issue 40), uploaded here and named by templates with
 * {{ asset('<name>') }}; each row copies the reference a template needs (an <img>, or an
 * @font-face for a font).
 */
import { useState } from 'preact/hooks';
import type { Asset } from '../api.js';
import { CardTable, CopyButton, ErrorMessage, Loading, PageHeading, useAsync } from '../components.js';
import { useDashboard } from '../context.js';
import { formatBytes, formatDateTime } from '../format.js';

/** What a template writes to use the asset. */
export const referenceOf = (a: Pick<Asset, 'name' | 'kind'>): string => {
  const url = `{{ asset('${a.name}') }}`;
  if (a.kind === 'image') return `<img src="${url}" alt="">`;
  const family = a.name.replace(/\.[a-z0-9]+$/i, '');
  return `@font-face { font-family: "${family}"; src: url("${url}"); }`;
};

/** The file's type as the API takes it: the browser's, or from its extension when it has none. */
const typeOf = (file: File): string => {
  if (file.type) return file.type;
  const ext = /\.([a-z0-9]+)$/i.exec(file.name)?.[1]?.toLowerCase();
  return (
    { ttf: 'font/ttf', otf: 'font/otf', woff2: 'font/woff2', svg: 'image/svg+xml' }[ext ?? ''] ??
    'application/octet-stream'
  );
};

/** A valid asset name from a file name: letters, digits, `.`, `_`, `-`. */
const nameOf = (fileName: string): string =>
  fileName
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 100);

export const AssetsPage = () => {
  const { api } = useDashboard();
  const list = useAsync(() => api.request<Asset[]>('v1/assets'), [api]);
  const [file, setFile] = useState<File | undefined>(undefined);
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [uploaded, setUploaded] = useState<Asset | undefined>(undefined);

  const upload = async (event: Event) => {
    event.preventDefault();
    if (!file) return;
    setBusy(true);
    setError(undefined);
    try {
      const typed = new Blob([file], { type: typeOf(file) });
      const asset = await api.request<Asset>(`v1/assets/${encodeURIComponent(name)}`, {
        method: 'PUT',
        file: typed,
      });
      setUploaded(asset);
      setFile(undefined);
      setName('');
      (event.target as HTMLFormElement).reset();
      list.reload();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const remove = async (asset: Asset) => {
    if (!confirm(`Delete ${asset.name}? Templates that name it will render without it.`)) return;
    try {
      await api.request(`v1/assets/${encodeURIComponent(asset.name)}`, { method: 'DELETE' });
      list.reload();
    } catch (e) {
      setError(e);
    }
  };

  return (
    <>
      <PageHeading>Assets</PageHeading>
      <p class="lead">
        Your own images and fonts. A template names them with <code>{"{{ asset('name') }}"}</code>: the
        renderer loads them from storage, for your renders only.
      </p>
      <form class="panel" onSubmit={upload} aria-labelledby="upload-title">
        <h2 id="upload-title">Upload</h2>
        <p class="muted">
          PNG, JPEG, WebP or SVG images, TTF, OTF or WOFF2 fonts; at most 4 MiB a file and 50 MiB in all. An
          SVG with a script or a link to another file is refused.
        </p>
        <label>
          File
          <input
            type="file"
            name="file"
            accept=".png,.jpg,.jpeg,.webp,.svg,.ttf,.otf,.woff2,image/png,image/jpeg,image/webp,image/svg+xml,font/ttf,font/otf,font/woff2"
            onChange={(e) => {
              const chosen = (e.target as HTMLInputElement).files?.[0];
              setFile(chosen);
              if (chosen) setName(nameOf(chosen.name));
            }}
          />
        </label>
        <label>
          Name
          <input
            type="text"
            name="name"
            value={name}
            required
            pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,99}"
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit" class="primary" disabled={!file || !name || busy}>
          {busy ? 'Uploading…' : 'Upload'}
        </button>
        <ErrorMessage error={error} />
        {uploaded && (
          <p role="status">
            Uploaded {uploaded.name}. Use it with <code>{referenceOf(uploaded)}</code>
          </p>
        )}
      </form>
      <section aria-labelledby="assets-title">
        <h2 id="assets-title">Your assets</h2>
        {list.loading && !list.data && <Loading what="assets" />}
        <ErrorMessage error={list.error} />
        {list.data && list.data.length === 0 && (
          <p class="muted">
            No assets yet: upload a logo or a font above, then copy its reference into a template.
          </p>
        )}
        {list.data && list.data.length > 0 && (
          <CardTable
            caption="Your assets"
            columns={[
              'Name',
              'Type',
              { label: 'Size', num: true },
              'Reference',
              'Uploaded',
              { label: 'Actions', hidden: true },
            ]}
          >
            {list.data.map((a) => (
              <tr key={a.name}>
                <th scope="row">{a.name}</th>
                <td data-label="Type">{a.content_type}</td>
                <td data-label="Size" class="num">
                  {formatBytes(a.size_bytes)}
                </td>
                <td data-label="Reference">
                  <code data-field="reference">{referenceOf(a)}</code>{' '}
                  <CopyButton text={referenceOf(a)} what={`reference to ${a.name}`} />
                </td>
                <td data-label="Uploaded">{formatDateTime(a.created_at)}</td>
                <td>
                  <button type="button" class="small danger" onClick={() => remove(a)}>
                    Delete<span class="visually-hidden"> {a.name}</span>
                  </button>
                </td>
              </tr>
            ))}
          </CardTable>
        )}
      </section>
    </>
  );
};
