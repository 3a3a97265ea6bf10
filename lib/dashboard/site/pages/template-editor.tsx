/**
 * One template: edit its html, header and footer (CodeMirror, loaded on demand) with a live PDF
 * preview beside it, its sample data (saved with it as `sample_variables`), its page and navigation
 * options (saved with it as `pdf_options`, the defaults of its renders), its watermark, stamp and
 * signature (finishing-options.tsx, loaded with the later pages' chunk), code that renders it (curl, JavaScript, Python), visibility, versions and deletion. A
 * public template of another account opens read-only and previews with its own sample data.
 *
 * The preview renders the editor's text (not the saved version) through POST /v1/previews and shows
 * the PDF it downloads: the renderer a render uses, with a PREVIEW mark on every page, and no job,
 * quota unit or usage (issue 40). Previews are capped per account, so they wait for a pause in
 * typing and never overlap. The variables the text reads come from the API's introspection (POST
 * /v1/previews/variables, the parse renders are checked with), never from a guess in the page.
 */
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, fetchPdf, type Preview, type Template, type TemplateVariables } from '../api.js';
import { CodeSnippets } from '../code-snippets.js';
import {
  ConfirmDialog,
  CopyButton,
  describeError,
  ErrorMessage,
  Loading,
  PageHeading,
} from '../components.js';
import { useDashboard } from '../context.js';
import type { EditorDiagnostic, TemplateEditor } from '../editor.js';
import { formatBytes, formatDateTime, formatDuration } from '../format.js';
import { compactJson, JsonText, sampleForCode } from '../json-text.js';
import { href } from '../routes.js';
import type { FinishingBody, FinishingChange, FinishingOptions } from './finishing-options.js';
import { FINISHING_FIELDS, optionsToSave } from './saved-options.js';

const STARTER_HTML = `<style>
  body { font-family: sans-serif; }
  h1 { color: #1f4e8c; }
</style>
<h1>Invoice {{ number }}</h1>
<p>Bill to: {{ customer }}</p>
<ul>
{% for line in lines %}
  <li>{{ line.item }}: {{ "%.2f"|format(line.price) }}</li>
{% endfor %}
</ul>
`;
const STARTER_VARIABLES = {
  number: '2026-0001',
  customer: 'Ada Lovelace',
  lines: [{ item: 'Pens', price: 3.5 }],
};
/** A pause in typing this long renders the preview. */
const PREVIEW_DELAY_MS = 1200;

/** A pause in typing this long asks the API for the variables the text reads. */
const DETECT_DELAY_MS = 500;

/** The API's preview caps (functions/settings.ts PREVIEWS_PER_ACCOUNT; docs/api/previews.md). */
const PREVIEWS_PER_MINUTE = 30;
const PREVIEWS_PER_DAY = 600;

const prettyJson = (value: unknown) => JSON.stringify(value, null, 2);

const PAPER_FORMATS = ['A4', 'A3', 'A5', 'LETTER', 'LEGAL'] as const;
const SIDES = ['top', 'right', 'bottom', 'left'] as const;
/** The API's defaults (README: POST /v1/pdf): only options that differ are sent. */
const DEFAULT_MARGIN = '0.4';
interface PageOptions {
  readonly format: (typeof PAPER_FORMATS)[number];
  readonly landscape: boolean;
  readonly print_background: boolean;
  /** As typed, in inches. */
  readonly margins: Readonly<Record<(typeof SIDES)[number], string>>;
  readonly paged_media: boolean;
  readonly outline: boolean;
  /** Unchecked: the deployment's default (PDF_TAGGED). */
  readonly tagged: boolean;
}
const DEFAULT_OPTIONS: PageOptions = {
  format: 'A4',
  landscape: false,
  print_background: true,
  margins: { top: DEFAULT_MARGIN, right: DEFAULT_MARGIN, bottom: DEFAULT_MARGIN, left: DEFAULT_MARGIN },
  paged_media: false,
  outline: false,
  tagged: false,
};
type NavigationOption = 'paged_media' | 'outline' | 'tagged';
const NAVIGATION: readonly { key: NavigationOption; label: string; title: string }[] = [
  {
    key: 'paged_media',
    label: 'Page numbers in the body',
    title: 'counter(page), counter(pages) and target-counter(attr(href), page) in the document’s own CSS',
  },
  { key: 'outline', label: 'Bookmarks', title: 'PDF bookmarks from the printed h1–h6' },
  {
    key: 'tagged',
    label: 'Tagged (accessible)',
    title: 'A structure tree for screen readers; much larger for big tables',
  },
];

/** A template's saved `pdf_options` as the fields show them (absent: the API's default). */
const optionsOf = (saved: Template['pdf_options']): PageOptions => {
  const margin = (side: (typeof SIDES)[number]) => {
    const n = saved?.margins?.[side];
    return n === undefined ? DEFAULT_MARGIN : String(n);
  };
  return {
    format: saved?.format ?? DEFAULT_OPTIONS.format,
    landscape: saved?.landscape ?? DEFAULT_OPTIONS.landscape,
    print_background: saved?.print_background ?? DEFAULT_OPTIONS.print_background,
    margins: { top: margin('top'), right: margin('right'), bottom: margin('bottom'), left: margin('left') },
    paged_media: saved?.paged_media ?? false,
    outline: saved?.outline ?? false,
    tagged: saved?.tagged ?? false,
  };
};

type OptionsBody = { ok: true; value: Record<string, unknown> } | { ok: false; message: string };

/** The render body's page options: those that differ from the API's defaults. */
const optionsBody = (o: PageOptions): OptionsBody => {
  const value: Record<string, unknown> = {};
  if (o.format !== DEFAULT_OPTIONS.format) value.format = o.format;
  if (o.landscape !== DEFAULT_OPTIONS.landscape) value.landscape = o.landscape;
  if (o.print_background !== DEFAULT_OPTIONS.print_background) value.print_background = o.print_background;
  const margins: Record<string, number> = {};
  for (const side of SIDES) {
    const n = Number(o.margins[side]);
    if (o.margins[side].trim() === '' || !Number.isFinite(n) || n < 0 || n > 10)
      return { ok: false, message: `The ${side} margin must be a number of inches from 0 to 10.` };
    margins[side] = n;
  }
  if (SIDES.some((side) => margins[side] !== Number(DEFAULT_MARGIN))) value.margins = margins;
  for (const { key } of NAVIGATION) if (o[key]) value[key] = true;
  return { ok: true, value };
};

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The watermark, stamp and signature of a template's saved `pdf_options` (finishing-options.tsx edits them). */
const savedFinishingOf = (saved: Template['pdf_options'] | undefined): FinishingBody => {
  const body: Record<string, unknown> = {};
  for (const field of FINISHING_FIELDS) if (saved?.[field]) body[field] = saved[field];
  return body as FinishingBody;
};

/**
 * The sample as typed: `value` for what the page reads of it (its names), `json` its text as sent
 * (key order and numbers as written: JSON.parse would change them, issue 22).
 */
type Variables =
  | { ok: true; value: Record<string, unknown>; json: JsonText }
  | { ok: false; message: string };

const parseVariables = (text: string): Variables => {
  try {
    const json = text.trim() === '' ? '{}' : text;
    const value = JSON.parse(json) as unknown;
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      return { ok: false, message: 'Variables must be a JSON object, e.g. {"name": "Ada"}.' };
    }
    return { ok: true, value: value as Record<string, unknown>, json: new JsonText(compactJson(json)) };
  } catch (e) {
    return { ok: false, message: `Variables are not valid JSON: ${(e as Error).message}` };
  }
};

/** The editor error a failed save or render points at: its line, when the API names one. */
const diagnosticOf = (error: unknown): EditorDiagnostic | undefined =>
  error instanceof ApiError && error.code === 'INVALID_HTML_TEMPLATE'
    ? { line: error.line, message: error.message }
    : undefined;

interface CodeEditorProps {
  readonly initial: string;
  /** A short editor (a header or a footer). */
  readonly compact?: boolean;
  /** The visible label's id (for the fallback text area) and its text (the editor's name). */
  readonly labelId: string;
  readonly label: string;
  /** Receives a way to focus the editor (the visible label focuses it when clicked). */
  readonly focusRef: { current: (() => void) | undefined };
  readonly readOnly: boolean;
  readonly variables: readonly string[];
  readonly diagnostic: EditorDiagnostic | undefined;
  readonly onChange: (value: string) => void;
}

/** CodeMirror, imported when the first editor opens; a plain text area if it cannot load. */
const CodeEditor = ({
  initial,
  compact,
  labelId,
  label,
  focusRef,
  readOnly,
  variables,
  diagnostic,
  onChange,
}: CodeEditorProps) => {
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<TemplateEditor | undefined>(undefined);
  const [state, setState] = useState<'loading' | 'ready' | 'failed'>('loading');
  useEffect(() => {
    let live = true;
    import('../editor.js').then(
      ({ createTemplateEditor }) => {
        if (!live || !host.current) return;
        editor.current = createTemplateEditor({
          host: host.current,
          doc: initial,
          label,
          readOnly,
          variables,
          onChange,
          compact,
        });
        focusRef.current = () => editor.current?.focus();
        setState('ready');
      },
      () => live && setState('failed'),
    );
    return () => {
      live = false;
      focusRef.current = undefined;
      editor.current?.destroy();
      editor.current = undefined;
    };
  }, []);
  useEffect(() => editor.current?.showDiagnostic(diagnostic), [diagnostic, state]);
  if (state === 'failed') {
    return (
      <textarea
        class={compact ? 'code-fallback compact mono' : 'code-fallback mono'}
        aria-labelledby={labelId}
        readOnly={readOnly}
        spellcheck={false}
        rows={compact ? 4 : 18}
        value={initial}
        onInput={(e) => onChange(e.currentTarget.value)}
      />
    );
  }
  return (
    <div class={compact ? 'code-editor compact' : 'code-editor'}>
      {state === 'loading' && <p class="muted">Loading the editor…</p>}
      <div ref={host} />
    </div>
  );
};

interface PreviewState {
  readonly status: 'idle' | 'rendering' | 'ready' | 'failed';
  readonly url?: string;
  readonly result?: Preview;
  readonly error?: unknown;
  /** What was rendered: the editor's text, or a saved version. */
  readonly source?: string;
}

interface DraftContent {
  readonly html: string;
  readonly header_html?: string;
  readonly footer_html?: string;
}

type RenderSource =
  | ({ readonly kind: 'draft' } & DraftContent)
  | { readonly kind: 'saved'; readonly templateId: string; readonly version: number };

const usePreview = () => {
  const { api } = useDashboard();
  const [preview, setPreview] = useState<PreviewState>({ status: 'idle' });
  const busy = useRef(false);
  const queued = useRef<(() => Promise<void>) | undefined>(undefined);
  useEffect(() => () => void (preview.url && URL.revokeObjectURL(preview.url)), [preview.url]);

  const run = useCallback(
    async (source: RenderSource, variables: JsonText, options: Record<string, unknown>) => {
      const body =
        source.kind === 'draft'
          ? {
              html: source.html,
              header_html: source.header_html,
              footer_html: source.footer_html,
              variables,
              ...options,
            }
          : { template_id: source.templateId, template_version: source.version, variables, ...options };
      setPreview((p) => ({ ...p, status: 'rendering', error: undefined }));
      try {
        const result = await api.request<Preview>('v1/previews', { method: 'POST', body });
        const url = URL.createObjectURL(await fetchPdf(result.download_url));
        setPreview({
          status: 'ready',
          url,
          result,
          source: source.kind === 'draft' ? 'the editor’s text' : `saved version ${source.version}`,
        });
      } catch (error) {
        setPreview((p) => ({ ...p, status: 'failed', error }));
      }
    },
    [api],
  );

  /** Renders now, or right after the render in progress (only the latest request waits). */
  const render = useCallback(
    (source: RenderSource, variables: JsonText, options: Record<string, unknown>) => {
      const task = async () => {
        busy.current = true;
        try {
          await run(source, variables, options);
        } finally {
          busy.current = false;
          const next = queued.current;
          queued.current = undefined;
          if (next) void next();
        }
      };
      if (busy.current) queued.current = task;
      else void task();
    },
    [run],
  );
  return { preview, render };
};

const PreviewPane = ({
  preview,
  auto,
  onAuto,
  onRender,
  name,
  canRenderDraft,
}: {
  preview: PreviewState;
  auto: boolean;
  onAuto: (on: boolean) => void;
  onRender: () => void;
  name: string;
  canRenderDraft: boolean;
}) => {
  const result = preview.result;
  const pages = result?.page_count ?? 0;
  return (
    <section class="preview-pane" aria-labelledby="preview-title">
      <h2 id="preview-title">Preview</h2>
      <div class="preview-controls">
        <label class="check">
          <input type="checkbox" checked={auto} onChange={(e) => onAuto(e.currentTarget.checked)} />
          Update the preview as I type
        </label>
        <button type="button" onClick={onRender} disabled={!canRenderDraft || preview.status === 'rendering'}>
          Render preview
        </button>
      </div>
      <p class="hint">
        Previews are free: they are not counted in your quota or listed in Jobs. Each page carries a PREVIEW
        mark, over the content and your stamp; previews are never signed or encrypted; an account has{' '}
        {PREVIEWS_PER_MINUTE} previews a minute and {PREVIEWS_PER_DAY} a day.
      </p>
      <p role="status" class="preview-status">
        {preview.status === 'rendering'
          ? 'Rendering…'
          : preview.status === 'ready' && result
            ? `Showing ${preview.source}: ${pages} ${pages === 1 ? 'page' : 'pages'}, ${formatBytes(result.file_size_bytes)}, rendered in ${formatDuration(result.render_duration_ms)}.`
            : ''}
      </p>
      {preview.status === 'failed' && (
        <p class="error" role="alert">
          Preview failed: {describeError(preview.error)}
        </p>
      )}
      {preview.url ? (
        <>
          <iframe class="pdf-frame" title="PDF preview" src={preview.url} />
          <a href={preview.url} download={`${name.trim() || 'preview'}.pdf`}>
            Download this PDF
          </a>
        </>
      ) : (
        <div class="pdf-frame placeholder">
          <p>The PDF appears here.</p>
        </div>
      )}
    </section>
  );
};

const VersionsAndSharing = ({
  template,
  onChange,
  onRenderVersion,
  onDelete,
}: {
  template: Template;
  onChange: (t: Template) => void;
  onRenderVersion: (version: number) => void;
  onDelete: () => void;
}) => {
  const { api } = useDashboard();
  const [version, setVersion] = useState(template.version);
  const [visibilityError, setVisibilityError] = useState<unknown>(undefined);
  const [visibilityBusy, setVisibilityBusy] = useState(false);
  useEffect(() => setVersion(template.version), [template.version]);
  const setPublic = async (isPublic: boolean) => {
    setVisibilityBusy(true);
    setVisibilityError(undefined);
    try {
      onChange(
        await api.request<Template>(`v1/templates/${encodeURIComponent(template.id)}/visibility`, {
          method: 'PATCH',
          body: { is_public: isPublic },
        }),
      );
    } catch (e) {
      setVisibilityError(e);
    } finally {
      setVisibilityBusy(false);
    }
  };
  return (
    <section class="panel" aria-labelledby="sharing-title">
      <h2 id="sharing-title">Sharing and versions</h2>
      <label class="check">
        <input
          type="checkbox"
          checked={template.is_public}
          disabled={visibilityBusy}
          onChange={(e) => void setPublic(e.currentTarget.checked)}
        />
        Public: every account can read and render this template
      </label>
      <ErrorMessage error={visibilityError} />
      <p>
        Version {template.version}, saved {formatDateTime(template.updated_at)}. Every saved change of the
        HTML, header, footer or sample data makes a new version; earlier versions stay renderable with{' '}
        <code>template_version</code>.
      </p>
      {template.version > 1 && (
        <div class="inline-form">
          <div class="field">
            <label for="tpl-version">Saved version</label>
            <select
              id="tpl-version"
              value={version}
              onChange={(e) => setVersion(Number(e.currentTarget.value))}
            >
              {Array.from({ length: template.version }, (_, i) => template.version - i).map((v) => (
                <option key={v} value={v}>
                  Version {v}
                  {v === template.version ? ' (latest)' : ''}
                </option>
              ))}
            </select>
          </div>
          <button type="button" onClick={() => onRenderVersion(version)}>
            Preview this version
          </button>
        </div>
      )}
      <p>
        <button type="button" class="danger" onClick={onDelete}>
          Delete template
        </button>
      </p>
    </section>
  );
};

const PageOptionsFields = ({
  options,
  onChange,
  error,
}: {
  options: PageOptions;
  onChange: (o: PageOptions) => void;
  error: string | undefined;
}) => (
  <fieldset class="page-options">
    <legend>Page</legend>
    <div class="option-row">
      <div class="field">
        <label for="tpl-format">Paper</label>
        <select
          id="tpl-format"
          value={options.format}
          onChange={(e) => onChange({ ...options, format: e.currentTarget.value as PageOptions['format'] })}
        >
          {PAPER_FORMATS.map((f) => (
            <option key={f} value={f}>
              {f === 'LETTER' ? 'Letter' : f === 'LEGAL' ? 'Legal' : f}
            </option>
          ))}
        </select>
      </div>
      <label class="check">
        <input
          type="checkbox"
          checked={options.landscape}
          onChange={(e) => onChange({ ...options, landscape: e.currentTarget.checked })}
        />
        Landscape
      </label>
      <label class="check">
        <input
          type="checkbox"
          checked={options.print_background}
          onChange={(e) => onChange({ ...options, print_background: e.currentTarget.checked })}
        />
        Backgrounds
      </label>
    </div>
    <div class="option-row">
      {NAVIGATION.map(({ key, label, title }) => (
        <label class="check" key={key} title={title}>
          <input
            type="checkbox"
            name={key}
            checked={options[key]}
            onChange={(e) => onChange({ ...options, [key]: e.currentTarget.checked })}
          />
          {label}
        </label>
      ))}
    </div>
    <div class="option-row margins">
      {SIDES.map((side) => (
        <div class="field" key={side}>
          <label for={`tpl-margin-${side}`}>
            {side[0]?.toUpperCase()}
            {side.slice(1)} margin (in)
          </label>
          <input
            id={`tpl-margin-${side}`}
            type="number"
            inputMode="decimal"
            min={0}
            max={10}
            step={0.1}
            value={options.margins[side]}
            onInput={(e) =>
              onChange({ ...options, margins: { ...options.margins, [side]: e.currentTarget.value } })
            }
          />
        </div>
      ))}
    </div>
    {error ? (
      <p class="error">{error}</p>
    ) : (
      <p class="hint">
        Saved with the template: a render of it uses them unless it gives its own. Used by the preview and
        written into the code below.
      </p>
    )}
  </fieldset>
);

/**
 * The template's id and code that renders it with its sample data: only what a caller must send
 * (the id, the version when it must be pinned, the variables), so the template's saved options
 * apply to the render, and a change of them reaches code already copied (issue 40).
 */
const UseFromCode = ({
  template,
  variables,
  pinned,
}: {
  template: Template;
  variables: Record<string, unknown> | JsonText | undefined;
  pinned: boolean;
}) => {
  const idRef = useRef<HTMLElement>(null);
  return (
    <section class="panel" aria-labelledby="use-title">
      <h2 id="use-title">Use this template from code</h2>
      <p class="id-row">
        Template id{' '}
        <code ref={idRef} data-field="template-id">
          {template.id}
        </code>{' '}
        <CopyButton text={template.id} what="template id" fallback={idRef} />
      </p>
      <p class="hint">
        The saved template’s page options apply; an option in the request overrides its saved value.
      </p>
      {variables ? (
        <CodeSnippets
          id="template"
          body={{
            template_id: template.id,
            // Another account's template renders only pinned, so that its owner's edits never reach
            // these renders unseen.
            ...(pinned ? { template_version: template.version } : {}),
            variables,
          }}
        />
      ) : (
        <p class="muted">Fix the sample data above to see the code.</p>
      )}
    </section>
  );
};

export const TemplateEditorPage = ({ id }: { id: string | undefined }) => {
  const { api, accountId } = useDashboard();
  const [template, setTemplate] = useState<Template | undefined>(undefined);
  const [loadError, setLoadError] = useState<unknown>(undefined);
  const [loaded, setLoaded] = useState(id === undefined);
  const [name, setName] = useState('');
  const html = useRef(id === undefined ? STARTER_HTML : '');
  const header = useRef('');
  const footer = useRef('');
  const [htmlVersion, setHtmlVersion] = useState(0);
  const [variablesText, setVariablesText] = useState(id === undefined ? prettyJson(STARTER_VARIABLES) : '{}');
  /** The saved sample's text without whitespace (`{}`: none), to tell an edit of it. */
  const [savedSample, setSavedSample] = useState('{}');
  const [options, setOptions] = useState<PageOptions>(DEFAULT_OPTIONS);
  const [finishing, setFinishing] = useState<FinishingChange>({ body: {}, changed: false });
  const [Finishing, setFinishingFields] = useState<typeof FinishingOptions | undefined>(undefined);
  const [detected, setDetected] = useState<
    { readonly variables: readonly string[]; readonly required: readonly string[] } | undefined
  >(undefined);
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<unknown>(undefined);
  const [saved, setSaved] = useState<string | undefined>(undefined);
  const [deleting, setDeleting] = useState(false);
  const [auto, setAuto] = useState(true);
  const { preview, render } = usePreview();
  const focusEditor = useRef<(() => void) | undefined>(undefined);
  const focusHeader = useRef<(() => void) | undefined>(undefined);
  const focusFooter = useRef<(() => void) | undefined>(undefined);
  /** Open at first when the template has a header or footer; then the user's to open and close. */
  const headerFooterOpen = useRef<boolean | undefined>(undefined);

  useEffect(() => {
    if (id === undefined) return;
    Promise.all([
      api.requestWithText<Template>(`v1/templates/${encodeURIComponent(id)}`),
      import('../sample-json.js'),
    ]).then(
      ([{ value: t, text }, { sampleTextOf }]) => {
        const sample = sampleTextOf(text);
        setTemplate(t);
        setName(t.name);
        html.current = t.html;
        header.current = t.header_html ?? '';
        footer.current = t.footer_html ?? '';
        setVariablesText(sample);
        setSavedSample(compactJson(sample));
        setOptions(optionsOf(t.pdf_options));
        setFinishing({ body: savedFinishingOf(t.pdf_options), changed: false });
        setLoaded(true);
      },
      (e: unknown) => {
        setLoadError(e);
        setLoaded(true);
      },
    );
  }, [api, id]);

  // The watermark, stamp and signature fields: the later pages' chunk, not the first load.
  useEffect(() => {
    let live = true;
    import('./later.js').then(
      ({ FinishingOptions }) => live && setFinishingFields(() => FinishingOptions),
      () => {},
    );
    return () => {
      live = false;
    };
  }, []);

  const readOnly = template !== undefined && template.owner_user_id !== accountId;
  const variables = parseVariables(variablesText);
  const pageOptions = optionsBody(options);
  const contentChanged = template
    ? html.current !== template.html ||
      header.current !== (template.header_html ?? '') ||
      footer.current !== (template.footer_html ?? '')
    : true;
  const sampleChanged = template ? !variables.ok || variables.json.text !== savedSample : true;
  const optionsChanged = template
    ? !sameJson(pageOptions, optionsBody(optionsOf(template.pdf_options))) || finishing.changed
    : true;
  const dirty = template ? name !== template.name || contentChanged || sampleChanged || optionsChanged : true;

  // What the text reads, and what a render cannot do without: the API's introspection of the text
  // as it is, after a pause in typing (opening the page asks once).
  useEffect(() => {
    if (readOnly || html.current.trim() === '') return;
    let live = true;
    const timer = setTimeout(() => {
      api.request<TemplateVariables>('v1/previews/variables', { method: 'POST', body: draft() }).then(
        (found) => live && setDetected({ variables: found.variables, required: found.required }),
        // A syntax error is shown by the preview, with its line; keep the last answer meanwhile.
        () => {},
      );
    }, DETECT_DELAY_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [template, htmlVersion, readOnly]);
  // Only what a render needs is missing: a name read behind `is defined` or `default` is not.
  const missing =
    detected && variables.ok ? detected.required.filter((n) => !Object.hasOwn(variables.value, n)) : [];

  const draft = (): DraftContent => ({
    html: html.current,
    ...(header.current.trim() ? { header_html: header.current } : {}),
    ...(footer.current.trim() ? { footer_html: footer.current } : {}),
  });

  const renderDraft = useCallback(() => {
    const v = parseVariables(variablesText);
    const o = optionsBody(options);
    if (!v.ok || !o.ok || html.current.trim() === '') return;
    // Another account's template renders by id, as its users' requests do.
    if (readOnly && template)
      render({ kind: 'saved', templateId: template.id, version: template.version }, v.json, o.value);
    else render({ kind: 'draft', ...draft() }, v.json, { ...o.value, ...finishing.body });
  }, [variablesText, options, finishing.body, readOnly, template, render]);

  // Another account's page runs only when asked to: opening it renders nothing.
  useEffect(() => {
    if (readOnly) setAuto(false);
  }, [readOnly]);

  // The live preview: a pause in typing (or opening the page) renders.
  useEffect(() => {
    if (!auto || !loaded || loadError) return;
    const timer = setTimeout(renderDraft, PREVIEW_DELAY_MS);
    return () => clearTimeout(timer);
  }, [auto, loaded, loadError, htmlVersion, variablesText, options, finishing.body, renderDraft]);

  const save = async (e: Event) => {
    e.preventDefault();
    setSaveError(undefined);
    setSaved(undefined);
    if (!variables.ok) {
      setSaveError(new Error(variables.message));
      return;
    }
    if (!pageOptions.ok) {
      setSaveError(new Error(pageOptions.message));
      return;
    }
    // Only what differs from the API's defaults; none at all is saved as none. A PATCH replaces
    // pdf_options whole: the saved options the page does not show go back as they were.
    const pdfOptions = optionsToSave(template?.pdf_options, Object.keys(DEFAULT_OPTIONS), {
      ...pageOptions.value,
      ...finishing.body,
    });
    if (template && !dirty) {
      setSaved('No changes to save.');
      return;
    }
    setSaving(true);
    try {
      if (!template) {
        const created = await api.request<Template>('v1/templates', {
          method: 'POST',
          body: { name, ...draft(), sample_variables: variables.json, pdf_options: pdfOptions },
        });
        location.hash = href.template(created.id);
        return;
      }
      const body: Record<string, unknown> = {};
      if (name !== template.name) body.name = name;
      if (html.current !== template.html) body.html = html.current;
      // An emptied header or footer is removed (null), as the API takes it.
      if (header.current !== (template.header_html ?? '')) body.header_html = header.current.trim() || null;
      if (footer.current !== (template.footer_html ?? '')) body.footer_html = footer.current.trim() || null;
      if (sampleChanged) body.sample_variables = variables.json;
      if (optionsChanged) body.pdf_options = pdfOptions;
      const [{ value: updated, text }, { sampleTextOf }] = await Promise.all([
        api.requestWithText<Template>(`v1/templates/${encodeURIComponent(template.id)}`, {
          method: 'PATCH',
          body,
        }),
        import('../sample-json.js'),
      ]);
      setTemplate(updated);
      setSavedSample(compactJson(sampleTextOf(text)));
      setName(updated.name);
      setSaved(`Saved: version ${updated.version}.`);
    } catch (err) {
      setSaveError(err);
    } finally {
      setSaving(false);
    }
  };

  if (!loaded) return <Loading what="the template" />;
  if (loadError) {
    return (
      <>
        <PageHeading>Template</PageHeading>
        <ErrorMessage error={loadError} />
        <p>
          <a href={href.templates}>Back to templates</a>
        </p>
      </>
    );
  }

  const variablesError = variables.ok ? undefined : variables.message;
  const nameError =
    saveError instanceof ApiError && saveError.code === 'INVALID_TEMPLATE_NAME' ? saveError : undefined;
  const diagnostic =
    diagnosticOf(saveError) ?? (preview.status === 'failed' ? diagnosticOf(preview.error) : undefined);
  const title = !template ? 'New template' : readOnly ? template.name : `Edit “${template.name}”`;
  headerFooterOpen.current ??= header.current !== '' || footer.current !== '';
  const completion = detected?.variables ?? template?.variables ?? Object.keys(STARTER_VARIABLES);
  const onEdit = (target: { current: string }) => (value: string) => {
    target.current = value;
    setHtmlVersion((v) => v + 1);
    // A save's template error was about the text before this edit.
    setSaveError((e: unknown) => (diagnosticOf(e) ? undefined : e));
  };

  return (
    <>
      <PageHeading>{title}</PageHeading>
      <p>
        <a href={href.templates}>← All templates</a>
        {readOnly && <span class="badge">Public template of another account: read-only</span>}
        {readOnly && template && (
          <p class="hint" data-field="offline-note">
            It renders offline (its page reaches no network) and pinned to version {template.version}; it is
            previewed only when you ask for it.
          </p>
        )}
      </p>
      <div class="editor-layout">
        <div class="editor-pane">
          <form onSubmit={save} aria-label="Template">
            {!readOnly && (
              <div class="field">
                <label for="tpl-name">Name</label>
                <input
                  id="tpl-name"
                  required
                  maxLength={200}
                  value={name}
                  onInput={(e) => setName(e.currentTarget.value)}
                  aria-invalid={nameError ? true : undefined}
                  aria-describedby={nameError ? 'tpl-name-error' : undefined}
                />
                <ErrorMessage error={nameError} id="tpl-name-error" />
              </div>
            )}
            <div class="field">
              {/* biome-ignore lint/a11y/noStaticElementInteractions: a label for the editor, as <label> is for inputs; the editor itself is reachable with Tab */}
              {/* biome-ignore lint/a11y/useKeyWithClickEvents: the editor itself is reachable with Tab */}
              <span class="label" id="tpl-html-label" onClick={() => focusEditor.current?.()}>
                HTML (Jinja2)
              </span>
              <CodeEditor
                initial={html.current}
                labelId="tpl-html-label"
                label="HTML (Jinja2)"
                focusRef={focusEditor}
                readOnly={readOnly}
                variables={completion}
                diagnostic={diagnostic}
                onChange={onEdit(html)}
              />
              {diagnostic && (
                <p class="error editor-error" data-field="template-error">
                  {diagnostic.line !== undefined && !/\bline \d+/i.test(diagnostic.message)
                    ? `Line ${diagnostic.line}: `
                    : ''}
                  {diagnostic.message}
                </p>
              )}
            </div>
            <details class="field header-footer" open={headerFooterOpen.current}>
              <summary>Header and footer</summary>
              <p class="hint">
                Printed in the top and bottom margins of every page; elements of class <code>pageNumber</code>
                , <code>totalPages</code>, <code>date</code> and <code>title</code> are filled in; inline
                styles only.
              </p>
              {/* biome-ignore lint/a11y/noStaticElementInteractions: as above */}
              {/* biome-ignore lint/a11y/useKeyWithClickEvents: as above */}
              <span class="label" id="tpl-header-label" onClick={() => focusHeader.current?.()}>
                Header
              </span>
              <CodeEditor
                compact
                initial={header.current}
                labelId="tpl-header-label"
                label="Header"
                focusRef={focusHeader}
                readOnly={readOnly}
                variables={completion}
                diagnostic={undefined}
                onChange={onEdit(header)}
              />
              {/* biome-ignore lint/a11y/noStaticElementInteractions: as above */}
              {/* biome-ignore lint/a11y/useKeyWithClickEvents: as above */}
              <span class="label" id="tpl-footer-label" onClick={() => focusFooter.current?.()}>
                Footer
              </span>
              <CodeEditor
                compact
                initial={footer.current}
                labelId="tpl-footer-label"
                label="Footer"
                focusRef={focusFooter}
                readOnly={readOnly}
                variables={completion}
                diagnostic={undefined}
                onChange={onEdit(footer)}
              />
            </details>
            <div class="field">
              <label for="tpl-variables">Sample data (JSON)</label>
              <textarea
                id="tpl-variables"
                class="mono"
                rows={8}
                spellcheck={false}
                value={variablesText}
                onInput={(e) => setVariablesText(e.currentTarget.value)}
                aria-invalid={variablesError ? true : undefined}
                aria-describedby={variablesError ? 'tpl-variables-error' : 'tpl-variables-hint'}
              />
              {variablesError ? (
                <p class="error" id="tpl-variables-error">
                  {variablesError}
                </p>
              ) : (
                <p class="hint" id="tpl-variables-hint">
                  The template’s <code>sample_variables</code>: saved with it, sent as <code>variables</code>{' '}
                  with each preview and written into the code below.
                </p>
              )}
              {missing.length > 0 && (
                <div class="warning missing" data-field="missing-variables">
                  <p>
                    The template reads {missing.length === 1 ? 'a variable' : 'variables'} the sample lacks:{' '}
                    {missing.map((n, i) => (
                      <span key={n}>
                        {i > 0 && ', '}
                        <code>{n}</code>
                      </span>
                    ))}
                    .
                  </p>
                  {variables.ok && (
                    <button
                      type="button"
                      class="small"
                      onClick={() =>
                        import('../sample-json.js').then(
                          ({ withKeys }) => setVariablesText(withKeys(variablesText, missing)),
                          () => {},
                        )
                      }
                    >
                      Add {missing.length === 1 ? 'it' : 'them'} to the sample
                    </button>
                  )}
                </div>
              )}
            </div>
            <PageOptionsFields
              options={options}
              onChange={setOptions}
              error={pageOptions.ok ? undefined : pageOptions.message}
            />
            {!readOnly &&
              (Finishing ? (
                <Finishing
                  key={template?.id ?? 'new'}
                  saved={savedFinishingOf(template?.pdf_options)}
                  errors={[saveError, preview.status === 'failed' ? preview.error : undefined]}
                  onChange={setFinishing}
                />
              ) : (
                <p class="muted">Loading the watermark, stamp and signature options…</p>
              ))}
            {!readOnly && (
              <div class="actions">
                <button type="submit" class="primary" disabled={saving}>
                  {saving ? 'Saving…' : template ? 'Save' : 'Create template'}
                </button>
                <span role="status" class="muted">
                  {saved ?? (template && dirty ? 'Unsaved changes' : '')}
                </span>
              </div>
            )}
            {!nameError && saveError !== undefined && (
              <p class="error" role="alert" data-field="save-error">
                Not saved: {describeError(saveError)}
                {saveError instanceof ApiError && <code class="error-code">{saveError.code}</code>}
              </p>
            )}
          </form>
          {template && (
            <UseFromCode
              template={template}
              variables={variables.ok ? sampleForCode(variables.value, variables.json) : undefined}
              pinned={readOnly}
            />
          )}
          {template && !readOnly && (
            <VersionsAndSharing
              template={template}
              onChange={setTemplate}
              onDelete={() => setDeleting(true)}
              onRenderVersion={(version) => {
                if (variables.ok && pageOptions.ok)
                  render(
                    { kind: 'saved', templateId: template.id, version },
                    variables.json,
                    pageOptions.value,
                  );
              }}
            />
          )}
        </div>
        <PreviewPane
          preview={preview}
          auto={auto}
          onAuto={setAuto}
          onRender={renderDraft}
          name={name}
          canRenderDraft={variables.ok && pageOptions.ok}
        />
      </div>
      {deleting && template && (
        <ConfirmDialog
          title={`Delete “${template.name}”?`}
          confirm="Delete template"
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            await api.request(`v1/templates/${encodeURIComponent(template.id)}`, { method: 'DELETE' });
            location.hash = href.templates;
          }}
        >
          <p>
            All {template.version} {template.version === 1 ? 'version' : 'versions'} go, and requests that
            name this template fail from now on. PDFs already rendered from it stay. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
};
