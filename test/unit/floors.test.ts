/**
 * The floors check (bin/floors.ts, part of `npm run lint`) on small trees of its own: it must
 * find an import that runs upward however it is written, and let every other import through.
 */
import { describe, expect, it } from 'vitest';
import { checkFloors, floorOf } from '../../bin/floors.js';
import { FLOORS } from '../../functions/floors.js';

const tree = (files: Record<string, string>) => new Map(Object.entries(files));

const floorNamed = (name: string) => FLOORS.findIndex((floor) => floor.name === name);

describe('floors', () => {
  it('places a file on the floor of the longest path that holds it', () => {
    expect(floorOf('domain/jobs.ts')).toBe(floorNamed('domain'));
    expect(floorOf('pdf/request.ts')).toBe(floorNamed('resources'));
    expect(floorOf('pdf/index.ts')).toBe(floorNamed('entry points'));
    expect(floorOf('templating/index.ts')).toBe(floorNamed('templating'));
    expect(floorOf('routes.ts')).toBe(floorNamed('entry points'));
    expect(floorOf('elsewhere.ts')).toBeUndefined();
  });

  it('lets imports from the same floor and from lower floors through', () => {
    const { imports, problems } = checkFloors(
      tree({
        'settings.ts': '',
        'domain/jobs.ts': "import { x } from '../settings.js';",
        'domain/renders.ts': "import type { Job } from './jobs.js';",
        'core/http.ts': "import { y } from '../adapters/s3/client.js';",
        'adapters/s3/client.ts':
          "import { z } from '../../core/http.js';\nimport { j } from '../../domain/jobs.js';",
        'pdf/index.ts': "import { r } from '../routes.js';\nimport { q } from './request.js';",
        'pdf/request.ts': "import { h } from '../core/http.js';",
        'routes.ts': "import { q } from './pdf/request.js';",
      }),
    );
    expect(problems).toEqual([]);
    expect(imports).toBe(9);
  });

  it('refuses an import from a lower floor to a higher one, however it is written', () => {
    const { problems } = checkFloors(
      tree({
        'routes.ts': '',
        'pdf/index.ts': '',
        'pdf/request.ts': "import { handler } from './index.js';",
        'core/openapi.ts': "import type { Route } from '../routes.js';",
        'domain/a.ts': "export { schema } from '../pdf/request.js';",
        'templating/b.ts': "const lazy = () => import('../domain/a.js');",
      }),
    );
    expect(problems).toEqual([
      {
        file: 'pdf/request.ts',
        message: '(resources) imports functions/pdf/index.ts (entry points), a higher floor',
      },
      {
        file: 'core/openapi.ts',
        message: '(plumbing) imports functions/routes.ts (entry points), a higher floor',
      },
      {
        file: 'domain/a.ts',
        message: '(domain) imports functions/pdf/request.ts (resources), a higher floor',
      },
      {
        file: 'templating/b.ts',
        message: '(templating) imports functions/domain/a.ts (domain), a higher floor',
      },
    ]);
  });

  it('refuses a file on no floor and an import of no file under functions/', () => {
    const { problems } = checkFloors(
      tree({
        'new-thing.ts': '',
        'domain/a.ts': "import { b } from '../../lib/b.js';\nimport { z } from 'zod';",
      }),
    );
    expect(problems).toEqual([
      { file: 'new-thing.ts', message: 'is on no floor: place it in functions/floors.ts' },
      { file: 'domain/a.ts', message: 'imports ../../lib/b.js, which is no file under functions/' },
    ]);
  });
});
