/**
 * The PDF outline (bookmarks) of an untagged render, built from its headings' named destinations
 * and written by an incremental update: the outline items, and the catalog again with /Outlines
 * and /PageMode /UseOutlines (the viewer opens with the bookmarks shown).
 *
 * Why not Chromium's own (`outline: true` in printToPDF): Chromium 143 does write one, nested by
 * heading level, but only from the structure tree, so it turns tagging on whatever `tagged` says
 * (the PDF is tagged either way, measured). On the 30-page report that is 3.66 MB instead of
 * 206 KB and ~1.2-1.6 s instead of ~0.6 s to print (2 busy cores). A tagged render does use
 * Chromium's outline (it costs nothing more there); an untagged one gets this, for the cost of
 * reading the destinations (0.4-1.2 ms) and writing the update (0.3-1 ms, ~140 bytes a heading):
 * the navigated report's 50 headings add 7 KB to its 77 KB, and its time is within the bench's
 * noise (test/bench/navigation.ts).
 */
import { textString } from '../pdf-metadata.js';
import type { Heading } from './page-script.js';
import { appendUpdate, type PdfDestinations } from './pdf-destinations.js';

interface Item {
  readonly title: string;
  readonly dest: string;
  readonly level: number;
  readonly children: Item[];
  num: number;
}

/** Headings nested by level: each under the nearest heading before it of a higher rank. */
export const nest = (headings: readonly { title: string; dest: string; level: number }[]): Item[] => {
  const roots: Item[] = [];
  const open: Item[] = [];
  for (const { title, dest, level } of headings) {
    const item: Item = { title, dest, level, children: [], num: 0 };
    while (open.length > 0 && (open.at(-1)?.level ?? 0) >= level) open.pop();
    (open.at(-1)?.children ?? roots).push(item);
    open.push(item);
  }
  return roots;
};

const descendants = (items: readonly Item[]): number =>
  items.reduce((sum, item) => sum + 1 + descendants(item.children), 0);

/**
 * The PDF with an outline of `headings` (those Chromium wrote a destination for), or undefined
 * when there is none to write. Every item is open: a reader shows the whole tree.
 */
export const withOutline = (
  pdf: Uint8Array,
  destinations: PdfDestinations,
  headings: readonly Heading[],
): Uint8Array | undefined => {
  const placed = headings.flatMap((h) => {
    const destination = destinations.byName.get(h.id);
    return destination ? [{ title: h.title, dest: destination.array, level: h.level }] : [];
  });
  if (placed.length === 0) return undefined;
  const roots = nest(placed);
  const { trailer, catalog } = destinations;
  const outlines = trailer.size;
  let next = outlines + 1;
  const number = (items: Item[]): void => {
    for (const item of items) {
      item.num = next++;
      number(item.children);
    }
  };
  number(roots);

  const objects = new Map<number, string>();
  const write = (items: readonly Item[], parent: number): void => {
    items.forEach((item, i) => {
      const entries = [`/Title ${textString(item.title)}`, `/Parent ${parent} 0 R`];
      const prev = items[i - 1];
      const following = items[i + 1];
      if (prev) entries.push(`/Prev ${prev.num} 0 R`);
      if (following) entries.push(`/Next ${following.num} 0 R`);
      const first = item.children[0];
      const last = item.children.at(-1);
      if (first && last) {
        entries.push(
          `/First ${first.num} 0 R`,
          `/Last ${last.num} 0 R`,
          `/Count ${descendants(item.children)}`,
        );
      }
      entries.push(`/Dest ${item.dest}`);
      objects.set(item.num, `<<${entries.join('\n')}>>`);
      write(item.children, item.num);
    });
  };
  const first = roots[0];
  const last = roots.at(-1);
  if (!first || !last) return undefined;
  objects.set(
    outlines,
    `<</Type /Outlines\n/First ${first.num} 0 R\n/Last ${last.num} 0 R\n/Count ${descendants(roots)}>>`,
  );
  write(roots, outlines);
  const updatedCatalog = catalog
    .replace(/\/(Outlines\s+\d+\s+0\s+R|PageMode\s*\/\w+)/g, '')
    .replace(/>>\s*$/, `\n/Outlines ${outlines} 0 R\n/PageMode /UseOutlines>>`);
  objects.set(trailer.root, updatedCatalog);
  const pagesRoot = /\/Pages\s+(\d+)\s+0\s+R/.exec(catalog)?.[1];
  const carried = [
    ...(trailer.info === undefined ? [] : [trailer.info]),
    ...(pagesRoot ? [Number(pagesRoot)] : []),
  ];
  return appendUpdate(pdf, trailer, objects, carried);
};
