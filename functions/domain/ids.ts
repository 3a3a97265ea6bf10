import { monotonicFactory } from 'ulid';

const ulid = monotonicFactory();

/** Opaque ids: a type prefix and a time-sortable ULID (`job_01J…`). */
export const newJobId = (): string => `job_${ulid()}`;
