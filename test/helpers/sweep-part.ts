/**
 * The two long hostile sweeps (template-injection, hostile-input) in two parts. The fast tier
 * (`npm test`, the `integration` project) runs a sample that still covers every kind of case:
 * every payload shape with one of its goals, every hostile value on some of each route's fields.
 * The full tier (`npm run test:all`, CI) also runs the same files in the `sweeps` project, which
 * sets SWEEP_PART=rest and runs exactly the cases the sample left out: together, every case once.
 */
export type SweepPart = 'sample' | 'rest';

export const SWEEP_PART: SweepPart = process.env.SWEEP_PART === 'rest' ? 'rest' : 'sample';

/** Whether a case that is (or is not) in the sample runs in this part. */
export const inThisPart = (sampled: boolean): boolean => sampled === (SWEEP_PART === 'sample');

/** Every `every`-th case is sampled, the n-th case starting at `offset`: a rotation over a grid. */
export const rotation =
  (every: number) =>
  (index: number, offset = 0): boolean =>
    (index + offset) % every === 0;
