/**
 * The scripts a navigated render runs in its page, in an isolated world of their own (as the
 * glyph check does, page-diagnostics.ts): the page's scripts cannot change what they see or call,
 * though they share its DOM.
 *
 * PREPARE finds what the render must learn from a first print, and marks it:
 * - elements whose ::before or ::after content uses counter(page), counter(pages) or
 *   target-counter(attr(X), page). Chromium keeps counter(page|pages) (and prints 0) but drops a
 *   declaration with target-counter(), so each <style> element's text has target-counter(attr(X),
 *   page[, style]) rewritten first to counter(nav-target-X[, style]), which it keeps; then the
 *   cascade itself (getComputedStyle of the pseudo-element) says which elements use them, with
 *   what content;
 * - headings h1-h6, for the outline (only those printed get a destination, and an item).
 * Every element whose page must be known gets an id (its own when unique) and a link to it in a
 * hidden element, which makes Chromium write it as a named destination (pdf-destinations.ts).
 *
 * FILL gives each marked pseudo-element its numbers: its content with counter(page) and
 * counter(pages) renamed to counters of the render's own, and a counter-reset on the
 * pseudo-element setting them (and each nav-target-X) to the numbers: CSS formats them, in any
 * counter style the document asked for.
 */

/** The most elements whose page one render looks up (references and headings). */
export const MAX_MARKS = 10_000;

export interface Reference {
  /** The element's own id, when its content uses counter(page). */
  readonly own: string | null;
  /** nav-target-X counter name → the id its target attribute points to (null: none in the document). */
  readonly targets: Record<string, string | null>;
}

export interface Heading {
  readonly id: string;
  readonly level: number;
  readonly title: string;
}

export interface Prepared {
  readonly references: readonly Reference[];
  readonly headings: readonly Heading[];
  /** More were found than MAX_MARKS; the rest were left alone. */
  readonly truncated: boolean;
}

/** `(options) => Prepared`, options `{ references: boolean, headings: boolean, max: number }`. */
export const PREPARE = `((options) => {
  const marked = new Map();
  let next = 0;
  let count = 0;
  let truncated = false;
  const links = document.createElement('div');
  links.hidden = true;
  links.setAttribute('data-nav-links', '');
  links.style.setProperty('display', 'none', 'important');
  const idOf = (el) => {
    if (marked.has(el)) return marked.get(el);
    let id = el.id;
    if (!id || document.getElementById(id) !== el) {
      do id = 'nav-' + next++; while (document.getElementById(id));
      if (!el.id) el.id = id;
      else {
        // A duplicated id stays: an empty anchor inside the element takes the destination.
        const anchor = document.createElement('span');
        anchor.id = id;
        el.prepend(anchor);
      }
    }
    const a = document.createElement('a');
    a.href = '#' + id;
    links.append(a);
    marked.set(el, id);
    return id;
  };
  const room = () => {
    if (count < options.max) return ++count;
    truncated = true;
    return 0;
  };

  const references = [];
  if (options.references) {
    const targetCounter = /target-counter\\(\\s*attr\\(\\s*([A-Za-z_][\\w-]*)(?:\\s+url)?\\s*\\)\\s*,\\s*page\\s*(,\\s*[\\w-]+\\s*)?\\)/g;
    for (const style of document.querySelectorAll('style')) {
      const css = style.textContent;
      if (css.includes('target-counter')) style.textContent = css.replace(targetCounter, 'counter(nav-target-$1$2)');
    }
    const uses = /counter\\((?:page|pages|nav-target-[\\w-]+)\\s*[,)]/;
    // Candidate elements: those the rules that use the counters select, their pseudo-elements
    // stripped; a selector querySelectorAll cannot take (nested rules) makes every element one.
    const selectors = new Set();
    const walk = (rules) => {
      for (const rule of rules) {
        if (rule.style && rule.selectorText && uses.test(rule.style.getPropertyValue('content'))) {
          selectors.add(rule.selectorText.replace(/::?(?:before|after)\\b/gi, '') || '*');
        }
        if (rule.cssRules) walk(rule.cssRules);
      }
    };
    for (const sheet of document.styleSheets) {
      try { walk(sheet.cssRules); } catch { /* another origin's sheet: unreadable */ }
    }
    const candidates = new Set();
    for (const selector of selectors) {
      let found;
      try { found = document.querySelectorAll(selector); } catch { found = document.querySelectorAll('body *'); }
      for (const el of found) candidates.add(el);
    }
    for (const el of candidates) {
      for (const pseudo of ['::before', '::after']) {
        const computed = getComputedStyle(el, pseudo);
        const content = computed.content;
        if (!uses.test(content)) continue;
        if (!room()) break;
        const targets = {};
        for (const [, name, attribute] of content.matchAll(/counter\\((nav-target-([\\w-]+))/g)) {
          const value = el.getAttribute(attribute) || '';
          let target = null;
          if (value.startsWith('#')) {
            let id = value.slice(1);
            try { id = decodeURIComponent(id); } catch {}
            const found = document.getElementById(id);
            if (found && room()) target = idOf(found);
          }
          targets[name] = target;
        }
        const own = /counter\\(page\\s*[,)]/.test(content) && room() ? idOf(el) : null;
        const index = references.length;
        el.setAttribute('data-nav-ref-' + pseudo.slice(2), String(index));
        references.push({ own, targets, pseudo, content, counterReset: computed.counterReset });
      }
    }
  }

  const headings = [];
  if (options.headings) {
    for (const el of document.querySelectorAll('h1, h2, h3, h4, h5, h6')) {
      // One that is not printed (display: none) gets no destination, and so no outline item:
      // asking for its boxes here would lay the page out for the screen, a cost of its own.
      const title = el.textContent.replace(/\\s+/g, ' ').trim();
      if (!title) continue;
      if (!room()) break;
      headings.push({ id: idOf(el), level: Number(el.tagName[1]), title: title.slice(0, 500) });
    }
  }
  if (marked.size > 0) (document.body || document.documentElement).append(links);
  window.__navReferences = references;
  return {
    references: references.map(({ own, targets }) => ({ own, targets })),
    headings,
    truncated,
  };
})`;

/**
 * `(numbers) => void`, numbers `{ pages: number, byId: Record<id, page> }`: the marked
 * pseudo-elements' content with their page numbers, in one stylesheet (replaced on a later fill).
 */
export const FILL = `((numbers) => {
  const references = window.__navReferences || [];
  let css = '';
  const quote = (s) => '"' + s.replace(/["\\\\]/g, '\\\\$&') + '"';
  references.forEach((ref, index) => {
    const resets = ['nav-page ' + (ref.own && numbers.byId[ref.own] || 0), 'nav-pages ' + numbers.pages];
    let content = ref.content
      .replace(/counter\\(page(\\s*[,)])/g, 'counter(nav-page$1')
      .replace(/counter\\(pages(\\s*[,)])/g, 'counter(nav-pages$1');
    for (const [name, target] of Object.entries(ref.targets)) {
      const page = target === null ? undefined : numbers.byId[target];
      if (page === undefined) {
        // A target that is not printed, or not there: nothing, as for a link to nowhere.
        content = content.replace(new RegExp('counter\\\\(' + name + '(?:\\\\s*,[^)]*)?\\\\)', 'g'), '""');
      } else resets.push(name + ' ' + page);
    }
    if (ref.counterReset && ref.counterReset !== 'none') resets.push(ref.counterReset);
    const attribute = 'data-nav-ref-' + ref.pseudo.slice(2);
    css += '[' + attribute + '=' + quote(String(index)) + ']' + ref.pseudo +
      ' { content: ' + content + ' !important; counter-reset: ' + resets.join(' ') + ' !important; }\\n';
  });
  let sheet = document.querySelector('style[data-nav-numbers]');
  if (!sheet) {
    sheet = document.createElement('style');
    sheet.setAttribute('data-nav-numbers', '');
    (document.head || document.documentElement).append(sheet);
  }
  sheet.textContent = css;
})`;
