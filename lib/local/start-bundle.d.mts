/** Types of start-bundle.mjs (plain JavaScript: it runs before anything compiles TypeScript). */
export declare const PROJECT_ROOT: string;
export declare const freshBuild: (
  root?: string,
) => { entry: string } | { stale: 'no build yet' | 'sources changed' };
export declare const buildStartBundle: (root?: string) => Promise<string>;
