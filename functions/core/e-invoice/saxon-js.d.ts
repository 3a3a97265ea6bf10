/** The part of SaxonJS 2 (no types of its own) that the schematron check uses. */
declare module 'saxon-js' {
  interface TransformOptions {
    readonly stylesheetInternal: unknown;
    readonly stylesheetBaseURI?: string;
    readonly sourceText: string;
    readonly destination: 'raw' | 'document' | 'serialized';
    readonly documentPool?: Readonly<Record<string, unknown>>;
  }
  interface TransformResult {
    readonly principalResult: unknown;
  }
  const SaxonJS: {
    transform(options: TransformOptions, execution: 'async'): Promise<TransformResult>;
    transform(options: TransformOptions, execution?: 'sync'): TransformResult;
    getResource(options: { readonly text: string; readonly type: 'xml' }): Promise<unknown>;
    XPath: {
      evaluate(
        xpath: string,
        context: unknown,
        options?: {
          readonly namespaceContext?: Readonly<Record<string, string>>;
          readonly resultForm?: string;
        },
      ): unknown;
    };
  };
  export default SaxonJS;
}
