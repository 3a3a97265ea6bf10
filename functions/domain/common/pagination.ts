/** A page of a listing: `limit` items after skipping `offset` (the wire schema: core/page-query.ts). */
export interface Page {
  readonly limit: number;
  readonly offset: number;
}
