import { describe, expect, it } from 'vitest';
import { nest } from '../../functions/renderer/navigation/outline.js';
import { decodeName } from '../../functions/renderer/navigation/pdf-destinations.js';
import { chromiumPrintFlags } from '../../functions/renderer/navigation/print.js';

const shape = (items: ReturnType<typeof nest>): unknown =>
  items.map((i) => (i.children.length > 0 ? { [i.title]: shape(i.children) } : i.title));

describe('the outline', () => {
  it('nests each heading under the nearest one before it of a higher rank', () => {
    const h = (title: string, level: number) => ({ title, level, dest: '[1 0 R /XYZ 0 0 0]' });
    expect(
      shape(nest([h('A', 1), h('A.1', 2), h('A.1.a', 3), h('A.2', 2), h('B', 1), h('B.x', 3), h('B.y', 2)])),
    ).toEqual([{ A: [{ 'A.1': ['A.1.a'] }, 'A.2'] }, { B: ['B.x', 'B.y'] }]);
  });

  it('keeps a document that starts below h1 flat at its first level', () => {
    const h = (title: string, level: number) => ({ title, level, dest: '' });
    expect(shape(nest([h('x', 3), h('y', 2), h('z', 3)]))).toEqual(['x', { y: ['z'] }]);
  });
});

describe('PDF names', () => {
  it('decodes #xx escapes as UTF-8', () => {
    expect(decodeName('gr#C3#B6#C3#9Fe#20#282#29')).toBe('größe (2)');
    expect(decodeName('section-1')).toBe('section-1');
  });
});

describe("Chromium's print flags", () => {
  it('asks Chromium for its outline only where the PDF is tagged anyway', () => {
    expect(chromiumPrintFlags({}, false)).toEqual({ tagged: false, outline: false });
    expect(chromiumPrintFlags({}, true)).toEqual({ tagged: true, outline: false });
    expect(chromiumPrintFlags({ outline: true }, false)).toEqual({ tagged: false, outline: false });
    expect(chromiumPrintFlags({ outline: true, tagged: true }, false)).toEqual({
      tagged: true,
      outline: true,
    });
    expect(chromiumPrintFlags({ tagged: false }, true)).toEqual({ tagged: false, outline: false });
  });
});
