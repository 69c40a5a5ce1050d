// The image rows of `npm run bench`: llama.cpp (wllama) with the vision fixture
// (scripts/fixture-vision.mjs) on the CPU, through `POST /v1/openai/chat/completions`. Time to
// first token of a question with one image against the same question alone, alternating, in the
// same run: on the fixture (a 32-pixel projector, 16 image tokens), and on its bench variant
// (CLIP ViT-B/14's geometry: 224 pixels, 256 image tokens), where the difference is what
// encoding one image and reading its tokens costs.
import { PNG } from 'pngjs';
import { call, viaApi } from './real-engine.mjs';
import { median, round } from './stats.mjs';

/** A red square PNG as a data URL: the picture every run sends (the projector resizes it). */
function redSquare() {
  const png = new PNG({ width: 256, height: 256 });
  for (let i = 0; i < png.data.length; i += 4) png.data.set([230, 20, 20, 255], i);
  return `data:image/png;base64,${PNG.sync.write(png).toString('base64')}`;
}

/**
 * @typedef {object} VisionSizes
 * @property {number} runs pairs of first-token runs (with the image, without), each model
 */

/**
 * A one-token streamed request of `model`: the question, with the image or not.
 * @param {string} model
 * @param {string | null} image
 */
function question(model, image) {
  const text = 'What colour is this?';
  const content = image
    ? [
        { type: 'text', text },
        { type: 'image_url', image_url: { url: image } },
      ]
    : text;
  return { model, messages: [{ role: 'user', content }], stream: true, max_tokens: 1 };
}

/**
 * Medians of first-token times with the image and without, and of each pair's difference.
 * @param {import('playwright-core').Page} page
 * @param {string} model
 * @param {string} image
 * @param {number} runs
 */
async function firstTokens(page, model, image, runs) {
  /** @type {{ image: number[], text: number[], added: number[] }} */
  const ms = { image: [], text: [], added: [] };
  // One of each first: the model's load and the first image's buffers are not what is measured.
  await viaApi(page, question(model, image), { firstOnly: true });
  await viaApi(page, question(model, null), { firstOnly: true });
  for (let r = 0; r < runs; r += 1) {
    // Alternating which goes first, so that neither always follows the other.
    const order = r % 2 === 0 ? [image, null] : [null, image];
    const times = [];
    for (const picture of order) {
      times.push((await viaApi(page, question(model, picture), { firstOnly: true })).ttft_ms);
    }
    const [withImage, without] = r % 2 === 0 ? times : [times[1], times[0]];
    ms.image.push(/** @type {number} */ (withImage));
    ms.text.push(/** @type {number} */ (without));
    ms.added.push(/** @type {number} */ (withImage) - /** @type {number} */ (without));
  }
  return {
    image: round(median(ms.image), 1),
    text: round(median(ms.text), 1),
    added: round(median(ms.added), 1),
  };
}

/**
 * Downloads both vision models through the API and measures them. Keys: `vision_*`.
 * @param {{ page: import('playwright-core').Page, models: { fixture: string, bench: string }, sizes: VisionSizes, log: (what: string) => void }} options
 */
export async function measureVision({ page, models, sizes, log }) {
  const image = redSquare();
  /** @type {Record<string, number>} */
  const results = {};
  for (const [name, model] of Object.entries(models)) {
    log(`downloading ${model} (the model and its projector) through the API`);
    const download = await call(page, 'POST', `/v1/hearth/models/${model}/download`);
    if (!download.text.includes('"phase":"done"')) throw new Error('the download did not finish');
    log(`${model}: time to first token with one image and without, ${sizes.runs} pairs`);
    const ttft = await firstTokens(page, model, image, sizes.runs);
    results[`vision_${name}_ttft_image_ms`] = ttft.image;
    results[`vision_${name}_ttft_text_ms`] = ttft.text;
    results[`vision_${name}_image_ms`] = ttft.added;
    results[`vision_${name}_ttft_ratio`] = round(ttft.image / ttft.text);
  }
  return results;
}

/** The table's rows: [key, what, check, target], as bench/run.mjs prints them. */
export const VISION_TARGETS = [
  ['fixture', 'the vision fixture (16 image tokens)'],
  ['bench', 'its bench projector (224 px, 256 image tokens)'],
].flatMap(([name, what]) => [
  [`vision_${name}_ttft_image_ms`, `time to first token with one image, ms, ${what}`, null, ''],
  [`vision_${name}_ttft_text_ms`, `the same question without it, ms, ${what}`, null, ''],
  [
    `vision_${name}_image_ms`,
    `what the image adds: encoding it and reading its tokens, ms, ${what}`,
    null,
    '',
  ],
  [`vision_${name}_ttft_ratio`, `time to first token, with ÷ without the image, ${what}`, null, ''],
]);
