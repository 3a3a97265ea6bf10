/**
 * The template editor: CodeMirror 6 with HTML and Jinja highlighting (@codemirror/lang-jinja on
 * @codemirror/lang-html), completion of the template's variables, and the API's template error
 * shown at its line. A chunk of its own: the page imports it only when an editor opens.
 *
 * It lives in a shadow root: CodeMirror styles a document with <style> elements, which the page's
 * Content-Security-Policy (style-src 'self') refuses, but a shadow root with constructed
 * stylesheets, which CSP does not govern. (A nonce would need a policy made per response; the
 * site is static files.)
 */
import { html } from '@codemirror/lang-html';
import { jinja } from '@codemirror/lang-jinja';
import { defaultHighlightStyle, HighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { type Diagnostic, lintGutter, setDiagnostics } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import { tags } from '@lezer/highlight';
import { basicSetup, EditorView } from 'codemirror';

export interface EditorDiagnostic {
  /** 1-based; undefined when the API did not name a line. */
  readonly line: number | undefined;
  readonly message: string;
}

export interface TemplateEditor {
  showDiagnostic(diagnostic: EditorDiagnostic | undefined): void;
  focus(): void;
  destroy(): void;
}

export interface TemplateEditorOptions {
  /** The element whose shadow root holds the editor. */
  readonly host: HTMLElement;
  readonly doc: string;
  /** The editor's accessible name (a label outside the shadow root cannot name it by id). */
  readonly label: string;
  readonly readOnly: boolean;
  /** Names offered by completion inside `{{ … }}` and `{% … %}`. */
  readonly variables: readonly string[];
  readonly onChange: (value: string) => void;
  /** A short editor (a header or a footer). */
  readonly compact?: boolean;
}

/**
 * CodeMirror's default style leaves Jinja's variables uncoloured: they get a colour of their own,
 * so that template code stands out from the HTML around it. (A second style: the default one stays
 * for everything else.)
 */
const jinjaHighlight = HighlightStyle.define([
  { tag: tags.variableName, color: '#0550ae' },
  { tag: tags.propertyName, color: '#0a3069' },
  { tag: tags.brace, color: '#b35900', fontWeight: 'bold' },
]);

const themeOf = (minHeight: string) =>
  EditorView.theme({
    '&': { fontSize: '14px', border: '1px solid var(--border)', borderRadius: '6px' },
    '&.cm-focused': { outline: '2px solid var(--focus)', outlineOffset: '2px' },
    '.cm-scroller': { fontFamily: 'var(--mono)', minHeight, maxHeight: '32rem' },
  });
const theme = themeOf('16rem');
const compactTheme = themeOf('4rem');

export const createTemplateEditor = (options: TemplateEditorOptions): TemplateEditor => {
  const root = options.host.shadowRoot ?? options.host.attachShadow({ mode: 'open' });
  const view = new EditorView({
    root,
    parent: root,
    state: EditorState.create({
      doc: options.doc,
      extensions: [
        basicSetup,
        jinja({
          // Closing tags are the author's to type: auto-closed ones doubled what they typed (`</p></p>`).
          base: html({ autoCloseTags: false }),
          variables: options.variables.map((label) => ({ label, type: 'variable' })),
        }),
        syntaxHighlighting(jinjaHighlight),
        syntaxHighlighting(defaultHighlightStyle),
        lintGutter(),
        options.compact ? compactTheme : theme,
        EditorView.lineWrapping,
        EditorState.readOnly.of(options.readOnly),
        EditorView.contentAttributes.of({
          'aria-label': options.label,
          'aria-multiline': 'true',
          ...(options.readOnly ? { 'aria-readonly': 'true' } : {}),
        }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged) options.onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    showDiagnostic(diagnostic) {
      const { doc } = view.state;
      const diagnostics: Diagnostic[] = [];
      if (diagnostic?.line !== undefined && diagnostic.line >= 1 && diagnostic.line <= doc.lines) {
        const line = doc.line(diagnostic.line);
        diagnostics.push({ from: line.from, to: line.to, severity: 'error', message: diagnostic.message });
      }
      view.dispatch(setDiagnostics(view.state, diagnostics));
    },
    focus: () => view.focus(),
    destroy: () => view.destroy(),
  };
};
