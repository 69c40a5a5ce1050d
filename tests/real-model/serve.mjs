// The app for the real-model test: built with the models' catalogue entries, and serving the
// files of those that HEARTH_MODEL_DIR holds.
import { preview } from 'vite';
import {
  buildForRealModel,
  modelFiles,
  realModel,
  realToolsModels,
} from '../../scripts/real-model.mjs';

const model = await realModel();
const tools = await realToolsModels();
const models = [model, ...tools];
await buildForRealModel(models, 'dist-real-model');
await preview({ logLevel: 'warn', plugins: [modelFiles(models)] });
const local = models.filter((m) => m.dir).map((m) => m.id);
console.log(
  `serving ${model.id}${model.dir ? ` from ${model.dir}` : ' (files from the network)'}` +
    (local.length > 0 ? `; self-hosted: ${[...new Set(local)].join(', ')}` : ''),
);
