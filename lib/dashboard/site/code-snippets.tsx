/** Ready code that renders through the API: curl, JavaScript and Python, one shown at a time, with a copy button. */
import { useRef, useState } from 'preact/hooks';
import { apiRoutes } from './api-routes.js';
import { CopyButton } from './components.js';
import { useDashboard } from './context.js';
import { API_KEY_VARIABLE, renderSnippets, SNIPPET_LANGUAGES, type SnippetLanguage } from './snippets.js';

export const CodeSnippets = ({
  id,
  body,
  keyValue,
}: {
  /** Prefix of the element ids (two snippet boxes can share a page). */
  id: string;
  /** POST /v1/pdf's body. */
  body: Readonly<Record<string, unknown>>;
  /** A key just created: the snippets then start by setting it. */
  keyValue?: string;
}) => {
  const { apiUrl } = useDashboard();
  const [language, setLanguage] = useState<SnippetLanguage>('curl');
  const code = useRef<HTMLElement>(null);
  let snippets: Record<SnippetLanguage, string>;
  try {
    snippets = renderSnippets(apiRoutes, { apiUrl, body });
  } catch (e) {
    return <p class="error">{(e as Error).message}</p>;
  }
  const setKey: Record<SnippetLanguage, string> = {
    curl: `export ${API_KEY_VARIABLE}='${keyValue}'\n`,
    javascript: `// Run with ${API_KEY_VARIABLE}=${keyValue} in the environment.\n`,
    python: `# Run with ${API_KEY_VARIABLE}=${keyValue} in the environment.\n`,
  };
  const text = (keyValue ? setKey[language] : '') + snippets[language];
  return (
    <div class="snippets" data-snippets={id}>
      <fieldset class="segmented">
        <legend class="visually-hidden">Language</legend>
        {SNIPPET_LANGUAGES.map((l) => (
          <label key={l.id}>
            <input
              type="radio"
              name={`${id}-language`}
              value={l.id}
              checked={language === l.id}
              onChange={() => setLanguage(l.id)}
            />
            {l.label}
          </label>
        ))}
      </fieldset>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a box that scrolls sideways must take focus so that a keyboard can scroll it */}
      <section class="snippet" tabIndex={0} aria-label={`${language} snippet`}>
        <pre>
          <code ref={code} data-language={language}>
            {text}
          </code>
        </pre>
      </section>
      <CopyButton text={text} what={`${language} snippet`} fallback={code} />
      {!keyValue && (
        <p class="hint">
          Set <code>{API_KEY_VARIABLE}</code> to one of your API keys first; the answer is the finished job,
          and its <code>download_url</code> is the PDF (valid 15 minutes).
        </p>
      )}
    </div>
  );
};
