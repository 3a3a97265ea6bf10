/** Types of start-bundle.mjs (plain JavaScript: it runs before anything compiles TypeScript). */
export declare const PROJECT_ROOT: string;
/** What is built: its cache directory's name, its source entry (relative to the root), its bundle's name. */
export interface BundleTarget {
  readonly name: string;
  readonly entry: string;
  readonly out: string;
}
/** `npm start`'s: bin/local.ts. */
export declare const START: BundleTarget;
export declare const freshBuild: (
  root?: string,
  target?: BundleTarget,
) => { entry: string } | { stale: 'no build yet' | 'sources changed' };
export declare const buildStartBundle: (root?: string, target?: BundleTarget) => Promise<string>;
/** The last build's entry when its inputs are as they were, else a new build's. */
export declare const currentBuild: (root?: string, target?: BundleTarget) => Promise<string>;
