import { dispatch } from '../core/dispatch.js';
import { createPdf } from './create-pdf.js';
import { getPdf } from './get-pdf.js';
import { listPdfs } from './list-pdfs.js';

export const handler = dispatch({
  'POST /v1/pdf': createPdf,
  'GET /v1/pdf': listPdfs,
  'GET /v1/pdf/{job_id}': getPdf,
});
