/** Where PDFs live, as the domain sees it: presigned links only, never the bytes. */
export interface PdfStorage {
  /** A presigned PUT the renderer uploads through (it has no AWS permissions of its own). */
  uploadTarget(objectKey: string): Promise<{ url: string; headers: Record<string, string> }>;
  /** A presigned GET, signed afresh on each call, that serves the file as `<filename>`. */
  downloadUrl(objectKey: string, filename: string): Promise<string>;
}
