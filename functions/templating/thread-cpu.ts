/**
 * A thread's CPU time, read by another thread of the same process (Linux /proc): the time limits
 * of template parsing and execution are CPU time, so that a busy machine (a worker getting an
 * eighth of a core at load 16 on 2 cores) or a stopped process is not blamed on the template.
 */
import { readFileSync, readlinkSync } from 'node:fs';

/** The calling thread's kernel id (the last part of /proc/thread-self), or undefined off Linux. */
export const currentThreadId = (): number | undefined => {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isSafeInteger(tid) && tid > 0 ? tid : undefined;
  } catch {
    return undefined;
  }
};

/** A thread's CPU time in ms (utime + stime, in clock ticks of 10 ms), or undefined if unreadable. */
export const threadCpuMs = (tid: number | undefined): number | undefined => {
  if (tid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
};
