/**
 * A batch run's item proves its page (issue 43): the document an item writes on the run's kept page
 * carries a nonce of the item's own (session.ts, RenderSession.itemNonce), checked before and after
 * the page is printed (render.ts). A page wiped, or written by anything else, in between has a new
 * document without it: the item fails unprinted instead of printing a page that is not its own.
 */
import { randomBytes } from 'node:crypto';
import type { RenderSession } from './session.js';

/** The property of a batch run item's document that holds its nonce: the renderer's own name. */
const ITEM_KEY = `__item_${randomBytes(8).toString('hex')}`;

/** A batch run's item found its page without its own document (another item's, or a blank one). */
export class ItemDocumentError extends Error {
  constructor(readonly when: 'before' | 'after') {
    super(`the page did not hold the item's document ${when} printing`);
    this.name = 'ItemDocumentError';
  }
}

/**
 * A batch run's item (issue 43): the page holds the document this item wrote, proven by its
 * nonce, checked before it is printed and again after (a page wiped or written by anything else
 * meanwhile has a new document, without it). Single renders have a page of their own: no check.
 */
export const proveItemDocument = async (session: RenderSession, when: 'before' | 'after'): Promise<void> => {
  const nonce = session.itemNonce;
  if (nonce === undefined) return;
  const { result } = await session.cdp.send('Runtime.evaluate', {
    expression: `document[${JSON.stringify(ITEM_KEY)}] === ${JSON.stringify(nonce)}`,
    returnByValue: true,
  });
  if (result.value !== true) throw new ItemDocumentError(when);
};

/** What the write appends to mark the document with the item's nonce; nothing for a single render. */
export const itemMark = (itemNonce: string | undefined): string =>
  itemNonce === undefined
    ? ''
    : ` Object.defineProperty(document, ${JSON.stringify(ITEM_KEY)}, { value: ${JSON.stringify(itemNonce)} });`;
