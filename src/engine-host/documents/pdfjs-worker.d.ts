/** pdf.js's worker code (pdfjs-dist ships no types for it), run in the engine worker's thread. */
declare module 'pdfjs-dist/build/pdf.worker.mjs' {
  export const WorkerMessageHandler: unknown;
}
