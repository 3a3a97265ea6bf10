/** Small pieces the pages share: headings that take focus, errors, confirmations, loading, tables. */
import type { ComponentChildren } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.js';

/**
 * The page's h1, focused when the page opens so that screen readers and keyboards start there;
 * before the browser paints it, so that a quick Tab cannot move on first and lose focus to it.
 */
export const PageHeading = ({ children }: { children: ComponentChildren }) => {
  const ref = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => ref.current?.focus({ preventScroll: true }), []);
  return (
    <h1 ref={ref} tabIndex={-1}>
      {children}
    </h1>
  );
};

/** What an error says to a person: the API's message, with the template line when there is one. */
export const describeError = (error: unknown): string => {
  if (error instanceof ApiError) {
    if (error.code === 'USAGE_LIMIT_EXCEEDED' && error.retryAfterSeconds !== undefined) {
      return `${error.message} Try again in ${error.retryAfterSeconds} s.`;
    }
    return error.line !== undefined && !/\bline \d+/.test(error.message)
      ? `Line ${error.line}: ${error.message}`
      : error.message;
  }
  return error instanceof Error ? error.message : String(error);
};

export const ErrorMessage = ({ error, id }: { error: unknown; id?: string }) =>
  error ? (
    <p class="error" role="alert" id={id}>
      {describeError(error)}
    </p>
  ) : null;

export const Loading = ({ what }: { what: string }) => (
  <p class="muted" role="status">
    Loading {what}…
  </p>
);

export interface AsyncState<T> {
  readonly data: T | undefined;
  readonly error: unknown;
  readonly loading: boolean;
  reload(): void;
}

/** Runs `load` when `deps` change (and on reload()), keeping the last data while it reloads. */
export const useAsync = <T,>(load: () => Promise<T>, deps: readonly unknown[]): AsyncState<T> => {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [loading, setLoading] = useState(true);
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let live = true;
    setLoading(true);
    load().then(
      (d) => {
        if (!live) return;
        setData(d);
        setError(undefined);
        setLoading(false);
      },
      (e: unknown) => {
        if (!live) return;
        setError(e);
        setLoading(false);
      },
    );
    return () => {
      live = false;
    };
  }, [...deps, generation]);
  return { data, error, loading, reload: () => setGeneration((g) => g + 1) };
};

export interface ConfirmProps {
  readonly title: string;
  readonly children: ComponentChildren;
  /** The confirming button's text, e.g. "Revoke key". */
  readonly confirm: string;
  readonly onConfirm: () => Promise<void>;
  readonly onClose: () => void;
}

/**
 * A modal confirmation (the native <dialog>: focus stays inside, Escape cancels, focus returns to
 * what opened it). The cancel button has focus first, so Enter never destroys anything by accident.
 */
export const ConfirmDialog = ({ title, children, confirm, onConfirm, onClose }: ConfirmProps) => {
  const ref = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null;
    const dialog = ref.current;
    dialog?.showModal();
    return () => {
      dialog?.close();
      // Back to what opened it, once the dialog is gone; to the page's heading when the action
      // removed it (a revoked key loses its button).
      setTimeout(() => {
        if (opener?.isConnected) opener.focus();
        else document.querySelector<HTMLElement>('main h1')?.focus();
      });
    };
  }, []);
  const run = async () => {
    setBusy(true);
    try {
      await onConfirm();
      onClose();
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby="dialog-title"
      onCancel={(e) => {
        e.preventDefault();
        if (!busy) onClose();
      }}
    >
      <h2 id="dialog-title">{title}</h2>
      <div class="dialog-body">{children}</div>
      <ErrorMessage error={error} />
      <div class="actions">
        {/* biome-ignore lint/a11y/noAutofocus: a dialog focuses its safe choice, as the platform's do */}
        <button type="button" autoFocus onClick={onClose} disabled={busy}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={run} disabled={busy}>
          {busy ? 'Working…' : confirm}
        </button>
      </div>
    </dialog>
  );
};

/**
 * Copies `text` to the clipboard; without the permission, selects `fallback` (the element showing
 * the text) so that a keyboard copy takes it. Says which in a status line beside it.
 */
export const CopyButton = ({
  text,
  label = 'Copy',
  what,
  fallback,
}: {
  text: string;
  label?: string;
  /** Read by screen readers after the label, e.g. "template id". */
  what: string;
  fallback?: { current: HTMLElement | null };
}) => {
  const [copied, setCopied] = useState<'yes' | 'no' | undefined>(undefined);
  useEffect(() => setCopied(undefined), [text]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied('yes');
    } catch {
      const node = fallback?.current;
      if (node instanceof HTMLInputElement || node instanceof HTMLTextAreaElement) node.select();
      else if (node) getSelection()?.selectAllChildren(node);
      setCopied('no');
    }
  };
  return (
    <span class="copy">
      <button type="button" class="small" onClick={copy}>
        {label}
        <span class="visually-hidden"> {what}</span>
      </button>
      <span role="status" class="muted">
        {copied === 'yes' ? 'Copied.' : copied === 'no' ? 'Selected: press Ctrl+C (⌘C).' : ''}
      </span>
    </span>
  );
};

/** A CardTable's column: its heading, right-aligned for numbers, or for screen readers only. */
export interface CardColumn {
  readonly label: string;
  readonly num?: boolean;
  readonly hidden?: boolean;
}

/**
 * A list as a table that turns into cards on a narrow screen (styles.css `.cards`): its caption
 * for screen readers, one header row, and `children` as its body's rows (each led by its
 * `<th scope="row">`). `kind` is the table's own class beside `cards`.
 */
export const CardTable = ({
  kind,
  caption,
  columns,
  children,
}: {
  kind?: string;
  caption: string;
  columns: readonly (string | CardColumn)[];
  children: ComponentChildren;
}) => (
  <div class="table-wrap">
    <table class={kind ? `${kind} cards` : 'cards'}>
      <caption class="visually-hidden">{caption}</caption>
      <thead>
        <tr>
          {columns.map((column) => {
            const { label, num, hidden } = typeof column === 'string' ? { label: column } : column;
            return (
              <th key={label} scope="col" class={num ? 'num' : undefined}>
                {hidden ? <span class="visually-hidden">{label}</span> : label}
              </th>
            );
          })}
        </tr>
      </thead>
      <tbody>{children}</tbody>
    </table>
  </div>
);
