import { describe, expect, it } from 'vitest';
import { glyphCheckNeeded } from '../../functions/renderer/page-diagnostics.js';

describe('glyphCheckNeeded: the missing-glyph check only where a box could print', () => {
  it('skips a page whose text is ASCII and characters every renderer font draws', () => {
    expect(glyphCheckNeeded('<h1>Invoice</h1><p>Total: 12.00 &amp; more &lt;3</p>')).toBe(false);
    expect(glyphCheckNeeded('<p>Straße, café, Zürich – “quoted” … 12 € · Δ Ж</p>')).toBe(false);
    expect(glyphCheckNeeded('<p>&euro; &#8364; &#x20AC; &copy; &nbsp;</p>')).toBe(false);
  });

  it('checks any other character, or a reference to one', () => {
    expect(glyphCheckNeeded('<p>𓋹</p>')).toBe(true);
    expect(glyphCheckNeeded('<p>中文</p>')).toBe(true);
    expect(glyphCheckNeeded('<p>&#x132F9;</p>')).toBe(true);
    expect(glyphCheckNeeded('<p>&#78000;</p>')).toBe(true);
    expect(glyphCheckNeeded('<p>&hearts;</p>')).toBe(true);
    expect(glyphCheckNeeded('<p>&copy 2026</p>')).toBe(true);
  });

  it('checks a page that could write text with a script', () => {
    expect(glyphCheckNeeded('<p>x</p><script>document.body.append("\\u4e2d")</script>')).toBe(true);
    expect(glyphCheckNeeded('<img src="x" onerror="document.body.append(1)">')).toBe(true);
    expect(glyphCheckNeeded('<iframe srcdoc="&lt;b&gt;x"></iframe>')).toBe(true);
    expect(glyphCheckNeeded('<iframe src="javascript:parent.document.body.append(1)"></iframe>')).toBe(true);
  });

  it('finds the script however the page spells it', () => {
    const write = 'parent.document.body.append(String.fromCharCode(0x4e2d))';
    for (const html of [
      '<img src=x/onerror=document.body.append(1)>',
      '<svg><g/onload=document.body.append(1)></svg>',
      '<img src=x alt="a"onerror="document.body.append(1)">',
      '<SCRIPT>document.body.append(1)</SCRIPT>',
      `<iframe src="jav&#x61;script:${write}"></iframe>`,
      `<iframe src="jav&#97script:${write}"></iframe>`,
      `<iframe src="java&Tab;script:${write}"></iframe>`,
      `<iframe src="java\tscript:${write}"></iframe>`,
      `<iframe src="java\nscript:${write}"></iframe>`,
      `<iframe src="javascript&colon;${write}"></iframe>`,
      `<iframe src="JaVaScRiPt:${write}"></iframe>`,
      '<iframe SRCDOC="x"></iframe>',
    ]) {
      expect(glyphCheckNeeded(html), html).toBe(true);
    }
  });
});
