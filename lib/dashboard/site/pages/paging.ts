/** A list read page by page (the API's limit and offset), with "more" while pages come back full. */
import { useEffect, useState } from 'preact/hooks';

export const PAGE_SIZE = 20;
/** The API's largest `limit` (functions/core/page-query.ts). */
const MAX_LIMIT = 100;

export interface Pages<T> {
  readonly items: readonly T[];
  readonly loading: boolean;
  readonly error: unknown;
  /** A full page came back: there may be more. */
  readonly more: boolean;
  loadMore(): void;
  reload(): void;
  /**
   * Reads the newest items again, as many as are on screen (up to the API's largest page), without
   * a loading state: what polling calls. Items on screen that the read did not reach stay, after it.
   */
  refresh(): Promise<void>;
}

/** Items are told apart by their id. */
interface WithId {
  readonly id: string;
}

/**
 * @param cutShort whether a page shorter than asked may still have a next one (template lists stop a
 * page early when it would grow past the answer's size cap)
 */
export const usePages = <T extends WithId>(
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
    refresh: async () => {
      const fresh = await load(Math.min(Math.max(items.length, PAGE_SIZE), MAX_LIMIT), 0);
      const ids = new Set(fresh.map((i) => i.id));
      setItems((current) => [...fresh, ...current.filter((i) => !ids.has(i.id))]);
    },
  };
};
