/** A list read page by page (the API's limit and offset), with "more" while pages come back full. */
import { useEffect, useState } from 'preact/hooks';

export const PAGE_SIZE = 20;

export interface Pages<T> {
  readonly items: readonly T[];
  readonly loading: boolean;
  readonly error: unknown;
  /** A full page came back: there may be more. */
  readonly more: boolean;
  loadMore(): void;
  reload(): void;
}

/**
 * @param cutShort whether a page shorter than asked may still have a next one (template lists stop a
 * page early when it would grow past the answer's size cap)
 */
export const usePages = <T>(
  load: (limit: number, offset: number) => Promise<T[]>,
  cutShort: (page: readonly T[]) => boolean = () => false,
): Pages<T> => {
  const [items, setItems] = useState<readonly T[]>([]);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<unknown>(undefined);
  const [more, setMore] = useState(false);
  const [generation, setGeneration] = useState(0);

  const fetchPage = (offset: number, replace: boolean) => {
    setLoading(true);
    return load(PAGE_SIZE, offset).then(
      (page) => {
        setItems((current) => (replace ? page : [...current, ...page]));
        setMore(page.length === PAGE_SIZE || (page.length > 0 && cutShort(page)));
        setError(undefined);
        setLoading(false);
      },
      (e: unknown) => {
        setError(e);
        setLoading(false);
      },
    );
  };

  useEffect(() => {
    void fetchPage(0, true);
  }, [generation]);

  return {
    items,
    loading,
    error,
    more,
    loadMore: () => void fetchPage(items.length, false),
    reload: () => setGeneration((g) => g + 1),
  };
};
