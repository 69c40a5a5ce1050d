// eslint-disable-next-line @typescript-eslint/ban-ts-comment -- plain JavaScript, as the docs' example
// @ts-nocheck
// The feature of docs/site.md's `download-then-stream` example written on WebLLM
// (@mlc-ai/web-llm 0.2.x), as a WebLLM user writes it, for `npm run bench -- --site` to count
// beside the docs' (non-blank, non-comment lines): a progress bar while the model downloads and
// loads (`initProgressCallback`), then the answer streamed (`engine.chat.completions.create({
// stream: true })`), with Stop for both: `engine.unload()` aborts a load under way (what was
// downloaded stays in WebLLM's cache, so the next click resumes from there) and
// `engine.interruptGenerate()` ends the answer. `new MLCEngine(config)` then `reload(id)` is what
// `CreateMLCEngine(id, { initProgressCallback })` does, with the engine in hand during the
// download so that Stop can reach it (CreateMLCEngine alone gives no way to stop a download).
// It is not run here: WebLLM's weights cannot be downloaded on this machine, and it needs WebGPU.
// The same page as the docs' example: #go, #stop, #bar (a <progress max="1">), #label, #output.
import { MLCEngine } from '@mlc-ai/web-llm';

const MODEL = 'Qwen3-0.6B-q4f16_1-MLC';
const [bar, label, output] = ['#bar', '#label', '#output'].map((s) => document.querySelector(s));
const engine = new MLCEngine({
  initProgressCallback: (p) => ((bar.value = p.progress), (label.textContent = p.text)),
});
let loaded = false;
document.querySelector('#stop').onclick = () =>
  loaded ? engine.interruptGenerate() : engine.unload();

document.querySelector('#go').onclick = async () => {
  if (!loaded) {
    await engine.reload(MODEL); // downloads what is missing, then loads it
    loaded = true;
  }
  const stream = await engine.chat.completions.create({
    messages: [{ role: 'user', content: 'Summarise this text: …' }],
    stream: true,
  });
  output.textContent = '';
  for await (const chunk of stream) output.textContent += chunk.choices[0]?.delta.content ?? '';
};
